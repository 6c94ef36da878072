import assert from 'node:assert/strict';
import type { SoulRecord } from '../db/repos/souls';
import { LIMITS } from '../scenario/limits';
import { QueryClock, QueryError, compileWhere, factAt } from './soul-query';

const soul = (soulprint: Record<string, unknown> | null) => ({ soulprint, covens: ['web'] }) as unknown as SoulRecord;

describe('factAt: a dotted path into a soul’s facts', () => {
  const s = soul({ os_release: { id: 'debian' }, addresses: ['10.0.0.5'] });

  it('reads nested keys, list items and the covens', () => {
    assert.equal(factAt(s, 'os_release.id'), 'debian');
    assert.equal(factAt(s, 'addresses.0'), '10.0.0.5');
    assert.deepEqual(factAt(s, 'covens'), ['web']);
  });

  it('is absent for a missing key, a path through a scalar, and a soul without facts', () => {
    assert.equal(factAt(s, 'kernel'), undefined);
    assert.equal(factAt(s, 'os_release.id.more'), undefined);
    assert.equal(factAt(soul(null), 'os_release'), undefined);
  });

  it('is absent for what objects inherit: a fact query never answers with a prototype’s function', () => {
    for (const path of ['constructor', '__proto__', 'toString', 'os_release.constructor', 'addresses.length.toFixed'])
      assert.equal(factAt(s, path), undefined, path);
  });
});

describe('a where over many souls: refused expressions and the query deadline (issue 45)', () => {
  const busy = (ms: number) => {
    const end = performance.now() + ms;
    while (performance.now() < end);
  };
  const refusal = async (p: Promise<unknown> | (() => unknown)): Promise<QueryError> => {
    try {
      await (typeof p === 'function' ? p() : p);
    } catch (e) {
      assert.ok(e instanceof QueryError, String(e));
      return e;
    }
    assert.fail('expected a QueryError');
  };

  it('a pattern RE2 refuses is the caller’s error naming the field, literal (at compile) or computed (at evaluation)', async () => {
    const literal = await refusal(() => compileWhere("soulprint.self.hostname.matches('(a)\\\\1')"));
    assert.equal(literal.field, 'where');
    assert.match(literal.message, /not valid RE2 syntax.*\(at offset 32\)/);
    const computed = compileWhere('soulprint.self.hostname.matches(soulprint.self.pattern)', 'target.where');
    const e = await refusal(() => computed(soul({ hostname: 'web', pattern: 'w(?=e)' })));
    assert.equal(e.field, 'target.where');
    assert.match(e.message, /not valid RE2 syntax/);
    const long = await refusal(() => computed(soul({ hostname: 'w'.repeat(70_000), pattern: 'w' })));
    assert.match(long.message, /string is longer than 65536 characters/);
    // A fact the soul lacks is still a non-match, not an error.
    assert.equal(computed(soul({ hostname: 'web' })), false);
    assert.equal(computed(soul({ hostname: 'web-1', pattern: '^web-\\d$' })), true);
  });

  it('stops between souls once the evaluations together pass the deadline, naming the field and the limit', async () => {
    const seen: number[] = [];
    const clock = new QueryClock(
      (_s, maxMillis) => {
        seen.push(maxMillis!);
        busy(30);
        return true;
      },
      'where',
      100,
    );
    const start = performance.now();
    const e = await refusal(async () => {
      for (let i = 0; i < 1000; i++) await clock.test(soul({}));
    });
    // 30 ms a soul against 100 ms: the fourth soul is given what is left (or, on a slow machine, the
    // third already passed it).
    assert.match(e.message, /exceeded the query deadline of 100 ms after [34] souls; narrow the selection/);
    assert.ok(performance.now() - start < 250, 'stopped at the deadline, not after 1000 souls');
    // Each evaluation is given at most what is left of the deadline (and never more than its own budget).
    assert.equal(seen[0], 100);
    assert.ok(seen.length >= 3 && seen.length <= 4, String(seen));
    assert.ok(seen[2]! <= 40 && seen.every((m, i) => i === 0 || m < seen[i - 1]!), String(seen));
  });

  it('a time budget cut short by the deadline reports the deadline', async () => {
    const clock = new QueryClock(
      (_s, maxMillis) => {
        busy(maxMillis!);
        throw new QueryError('where', `expression exceeded its time budget of ${maxMillis} ms`);
      },
      'where',
      50,
    );
    assert.match((await refusal(clock.test(soul({})))).message, /query deadline of 50 ms after 0 souls/);
    assert.ok(LIMITS.maxQueryMillis >= LIMITS.maxExpressionMillis);
  });

  it('lets other work run while it scans: a timer fires during a long scan', async () => {
    const clock = new QueryClock(() => {
      busy(5);
      return false;
    }, 'where');
    let fired = 0;
    const timer = setInterval(() => fired++, 1);
    try {
      for (let i = 0; i < 60; i++) await clock.test(soul({}));
    } finally {
      clearInterval(timer);
    }
    // 300 ms of evaluation, yielding every 20 ms: the timer runs about 15 times, and not zero.
    assert.ok(fired >= 5, `the timer fired ${fired} times`);
  });
});
