import assert from 'node:assert/strict';
import { compileQueryValidator, compileValidator, fieldErrors } from './validate';
import { registerSoulBody, listSoulsQuery } from './schemas/souls';
import { createServiceBody } from './schemas/services';

function errorsOf(schema: object, location: 'body' | 'query', data: unknown) {
  const v = compileValidator(schema as Record<string, unknown>, location);
  return v(data) ? [] : fieldErrors(location, v.errors);
}

describe('api/validate: field errors that name the field and the rule', () => {
  it('accepts a well-formed soul registration', () => {
    assert.deepEqual(
      errorsOf(registerSoulBody, 'body', {
        sid: 'web-1.prod.example.com',
        transport: 'agent',
        covens: ['web', 'eu_west.1'],
      }),
      [],
    );
  });

  it('refuses short names, uppercase, bad labels, IPs and over-long SIDs with the FQDN rule in words', () => {
    for (const sid of [
      'web1',
      'Web1.example.com',
      '-a.example.com',
      'a-.example.com',
      'a..b.com',
      '10.0.0.1',
      `${'a'.repeat(64)}.com`,
      `${Array(64).fill('abc').join('.')}.com`,
      'a.example.com.',
    ]) {
      const errs = errorsOf(registerSoulBody, 'body', { sid, transport: 'agent', covens: [] });
      assert.ok(
        errs.some((e) => e.path === '/body/sid' && /fully qualified domain name/.test(e.message)),
        `${sid}: ${JSON.stringify(errs)}`,
      );
    }
  });

  it('lists each missing or unknown field and bad coven separately', () => {
    const errs = errorsOf(registerSoulBody, 'body', {
      transport: 'carrier-pigeon',
      covens: ['ok', 'Bad Label', 'ok'],
      extra: 1,
    });
    const paths = errs.map((e) => e.path);
    assert.ok(paths.includes('/body/sid'));
    assert.ok(paths.includes('/body/extra'));
    assert.ok(paths.includes('/body/covens/1'));
    assert.ok(errs.some((e) => e.path === '/body/transport' && e.message === 'must be one of: agent, ssh'));
    assert.ok(errs.some((e) => e.path === '/body/covens' && /repeat/.test(e.message)));
  });

  it('coerces query strings: limit becomes a number with the default 100, and out-of-range limits are refused', () => {
    const q: Record<string, unknown> = { limit: '25' };
    assert.deepEqual(errorsOf(listSoulsQuery, 'query', q), []);
    assert.equal(q.limit, 25);
    const d: Record<string, unknown> = {};
    errorsOf(listSoulsQuery, 'query', d);
    assert.equal(d.limit, 100);
    assert.equal(errorsOf(listSoulsQuery, 'query', { limit: '1001' })[0].path, '/query/limit');
    assert.equal(errorsOf(listSoulsQuery, 'query', { limit: ['1', '2'] })[0].path, '/query/limit');
  });

  it('one query check for REST strings and MCP numbers: a limit must be a finite decimal integer, whatever coercion would make of it', () => {
    const check = compileQueryValidator(listSoulsQuery);
    for (const limit of [
      '1e309',
      'Infinity',
      '-Infinity',
      '1e3',
      '0x10',
      ' 5',
      '5.0',
      'NaN',
      1.5,
      Number.MAX_VALUE,
      true,
    ]) {
      const q: Record<string, unknown> = { limit };
      assert.deepEqual(
        check(q),
        [{ path: '/query/limit', message: 'must be a decimal integer (digits only)' }],
        String(limit),
      );
    }
    for (const [limit, want] of [
      ['25', 25],
      [25, 25],
    ] as const) {
      const q: Record<string, unknown> = { limit };
      assert.deepEqual(check(q), []);
      assert.equal(q.limit, want);
    }
    assert.equal(check({ limit: 1001 })[0].path, '/query/limit', "the schema's maximum still holds");
    assert.equal(check({ limit: ['1', '2'] })[0].message, 'must be given once');
  });

  it('accepts the usual git URLs and refs and refuses ones git would misread', () => {
    const ok = (git: string, ref: string) => errorsOf(createServiceBody, 'body', { name: 'nginx', git, ref });
    assert.deepEqual(ok('https://git.example.com/ops/nginx.git', 'v1.4.0'), []);
    assert.deepEqual(ok('git@git.example.com:ops/nginx.git', 'release/2026-11'), []);
    assert.deepEqual(ok('file:///srv/git/nginx', 'main'), []);
    assert.ok(ok('--upload-pack=touch /tmp/x', 'main').some((e) => e.path === '/body/git'));
    for (const ref of ['-x', 'a..b', 'a/', 'x.lock', 'a@{1}', 'a b']) {
      assert.ok(
        ok('https://h/r.git', ref).some((e) => e.path === '/body/ref'),
        ref,
      );
    }
  });
});
