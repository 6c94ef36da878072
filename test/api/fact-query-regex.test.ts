// No expression can freeze the keeper (issue 45, H-4): the review's viewer probe
// `GET /v1/souls?where='aaaaaaaaaaaaaaaaaaaaaaaa!'.matches('^(a+)+$')` blocked the event loop for
// 8.5 s with JavaScript's backtracking RegExp. On a real keeper: the probe answers in milliseconds
// while /readyz keeps answering, `matches` is RE2's partial match over the stored facts, and a
// pattern RE2 refuses or a string over its limit is a 400 naming `where` and the rule.
import assert from 'node:assert/strict';
import { markConnected, registerSoul } from '../../db/repos/souls';
import { startTestKeeper, type TestKeeper } from '../support/keeper';
import { assertProblem, clientFor, operatorToken } from './helpers';

describe('Fact queries: CEL matches is RE2 and cannot block the keeper', function () {
  this.timeout(60_000);
  let tk: TestKeeper;
  let viewer: ReturnType<typeof clientFor>;
  const where = (src: string) => `/v1/souls?where=${encodeURIComponent(src)}`;

  before(async () => {
    tk = await startTestKeeper();
    viewer = clientFor(tk, await operatorToken(tk, 'vera', 'viewer'));
    const db = tk.keeper.runtime.db;
    const hosts: [string, Record<string, unknown>][] = [
      ['web-1.rx.example.com', { pattern: '^web-\\d$' }],
      ['web-2.rx.example.com', { pattern: '(web)\\1' }],
      ['db-1.rx.example.com', { motd: `${'x'.repeat(70_000)}` }],
    ];
    for (const [sid, extra] of hosts) {
      await registerSoul(db, { sid, transport: 'agent', covens: ['rx'] }, { tokenTtlMs: 60_000 });
      await markConnected(db, sid, 'k-test', { fqdn: sid, hostname: sid.split('.')[0], ...extra }, new Date());
    }
  });
  after(async () => {
    await tk?.stop();
  });

  it("answers the review's probe in milliseconds while /readyz keeps answering, and a longer subject changes nothing", async () => {
    const before = await fetch(`${tk.baseUrl}/readyz`);
    for (const n of [24, 40]) {
      const probe = where(`'${'a'.repeat(n)}!'.matches('^(a+)+$')`);
      const start = performance.now();
      const [answer, ready] = await Promise.all([
        viewer('GET', probe),
        (async () => {
          // Asked while the query is in flight: it answers as it did before.
          await new Promise((r) => setImmediate(r));
          const r = await fetch(`${tk.baseUrl}/readyz`);
          return { status: r.status, at: performance.now() - start };
        })(),
      ]);
      const took = performance.now() - start;
      assert.equal(answer.status, 200, answer.text);
      assert.deepEqual(answer.body.items, [], 'the string has a `!`: no match, on any soul');
      assert.ok(took < 1000, `the probe took ${took.toFixed(0)} ms at ${n} characters`);
      assert.equal(ready.status, before.status);
      assert.ok(ready.at < 1000, `/readyz answered after ${ready.at.toFixed(0)} ms`);
    }
  });

  it('matches is a partial match over the stored facts, anchored with ^ and $', async () => {
    const sids = async (src: string) => {
      const r = await viewer('GET', where(src));
      assert.equal(r.status, 200, r.text);
      return r.body.items.map((s: { sid: string }) => s.sid);
    };
    assert.deepEqual(await sids("soulprint.self.hostname.matches('^web-\\\\d$')"), [
      'web-1.rx.example.com',
      'web-2.rx.example.com',
    ]);
    assert.deepEqual(await sids("soulprint.self.hostname.matches('b-1')"), [
      'db-1.rx.example.com',
      'web-1.rx.example.com',
    ]);
    assert.deepEqual(await sids("soulprint.self.hostname.matches('^b-1')"), []);
    // RE2 syntax JavaScript lacks: a named group written (?P<name>...).
    assert.deepEqual(await sids("soulprint.self.hostname.matches('^(?P<role>db)-')"), ['db-1.rx.example.com']);
  });

  it('refuses a literal pattern RE2 refuses with a 400 naming where, the rule and its offset', async () => {
    for (const [pattern, rule] of [
      ['^(web)\\\\1$', /invalid escape sequence/],
      ['web(?=-1)', /invalid or unsupported Perl syntax/],
    ] as const) {
      const r = await viewer('GET', where(`soulprint.self.hostname.matches('${pattern}')`));
      assertProblem(r, 400, /^where: matches: the pattern .* is not valid RE2 syntax .*\(at offset 32\)$/);
      assert.match(r.body.detail, rule);
      assert.equal(r.body.errors[0].path, '/query/where');
    }
    const long = await viewer('GET', where(`soulprint.self.hostname.matches('${'a'.repeat(1025)}')`));
    assertProblem(long, 400, /^where: matches: the pattern is longer than 1024 characters/);
  });

  it('refuses a pattern computed from the facts, or a fact over the string limit, when evaluated: 400 naming where', async () => {
    // web-1's stored pattern is valid, web-2's is a backreference: the query is refused, not half-answered.
    const computed = await viewer(
      'GET',
      where('has(soulprint.self.pattern) && soulprint.self.hostname.matches(soulprint.self.pattern)'),
    );
    assertProblem(computed, 400, /^where: CEL evaluation error: matches: the pattern "\(web\)\\\\1" is not valid RE2/);
    const big = await viewer('GET', where("has(soulprint.self.motd) && soulprint.self.motd.matches('y')"));
    assertProblem(big, 400, /^where: CEL evaluation error: matches: the string is longer than 65536 characters/);
  });
  it("an execution's target.where is RE2 too: the probe selects none, a refused pattern is a 400 naming target.where", async () => {
    const admin = clientFor(tk);
    const preview = (where: string) => admin('POST', '/v1/executions/preview', { body: { target: { where } } });
    const probe = await preview(`'${'a'.repeat(30)}!'.matches('^(a+)+$')`);
    assert.equal(probe.status, 200, probe.text);
    assert.equal(probe.body.selected, 0);
    const web = await preview("soulprint.self.hostname.matches('^web-')");
    assert.deepEqual(web.body.sids, ['web-1.rx.example.com', 'web-2.rx.example.com']);
    const bad = await preview("soulprint.self.hostname.matches('(?<!x)web')");
    assertProblem(bad, 400, /^target\.where: matches: the pattern .* is not valid RE2 syntax/);
    assert.equal(bad.body.errors[0].path, '/body/target/where');
  });
});
