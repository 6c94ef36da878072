// Souls and bootstrap tokens through the Operator API (interface spec 2.2, 3.3, 4.1).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { startTestKeeper, type TestKeeper } from '../support/keeper';
import { assertProblem, clientFor } from './helpers';

describe('Operator API: souls', function () {
  let tk: TestKeeper;
  let api: ReturnType<typeof clientFor>;

  before(async () => {
    tk = await startTestKeeper();
    api = clientFor(tk);
  });
  after(async () => {
    await tk?.stop();
  });

  const register = (sid: string, covens: string[] = ['web']) =>
    api('POST', '/v1/souls', { body: { sid, transport: 'agent', covens } });
  const activeTokens = async (sid: string) =>
    Number((await tk.keeper.runtime.db('bootstrap_tokens').where({ sid }).whereNull('used_at').count({ n: '*' }))[0].n);

  it('registers a host as pending and returns its bootstrap token once', async () => {
    const a = await register('web-1.prod.example.com', ['web', 'eu-west']);
    assert.equal(a.status, 201, a.text);
    assert.equal(a.headers.get('location'), '/v1/souls/web-1.prod.example.com');
    assert.equal(a.body.status, 'pending');
    assert.deepEqual(a.body.covens, ['web', 'eu-west']);
    assert.match(a.body.bootstrap_token, /^kbt_[A-Za-z0-9_-]{43}$/);
    const ttl = Date.parse(a.body.bootstrap_token_expires_at) - Date.now();
    assert.ok(ttl > 23.9 * 3600_000 && ttl <= 24 * 3600_000, 'default TTL 24h');

    const again = await api('GET', '/v1/souls/web-1.prod.example.com');
    assert.equal(again.status, 200);
    assert.equal(again.body.status, 'pending');
    assert.equal(again.body.bootstrap_token, undefined, 'the token is never shown again');
    assert.equal(again.body.bootstrap_token_expires_at, a.body.bootstrap_token_expires_at);
  });

  it('stores only the SHA-256 of a bootstrap token, never the token', async () => {
    const a = await register('hash-check.example.com');
    const rows = await tk.keeper.runtime.db.raw(
      "select t::text as row, t.token_hash from bootstrap_tokens t where sid = 'hash-check.example.com'",
    );
    assert.equal(rows.rows.length, 1);
    assert.deepEqual(rows.rows[0].token_hash, createHash('sha256').update(a.body.bootstrap_token).digest());
    assert.ok(!rows.rows[0].row.includes(a.body.bootstrap_token.slice(4)));
  });

  it('answers 409 for a SID that is already registered, and 404 for an unknown one', async () => {
    await register('dup.example.com');
    assertProblem(await register('dup.example.com'), 409, /already registered/);
    assertProblem(await api('GET', '/v1/souls/nobody.example.com'), 404);
    assertProblem(await api('POST', '/v1/souls/nobody.example.com/issue-token'), 404);
  });

  it('refuses invalid registrations with a 400 naming each field, and ssh without its ssh block', async () => {
    const bad = await api('POST', '/v1/souls', { body: { sid: 'shortname', transport: 'agent', covens: ['Web'] } });
    assertProblem(bad, 400);
    const paths = bad.body.errors.map((e: { path: string }) => e.path);
    assert.deepEqual(paths.sort(), ['/body/covens/0', '/body/sid']);
    assert.match(
      bad.body.errors.find((e: { path: string }) => e.path === '/body/sid').message,
      /fully qualified domain name/,
    );
    const ssh = await api('POST', '/v1/souls', { body: { sid: 'ssh-host.example.com', transport: 'ssh', covens: [] } });
    assertProblem(ssh, 400, /transport ssh needs the ssh block/);
    assert.equal(ssh.body.errors[0].path, '/body/ssh');
    assertProblem(await api('GET', '/v1/souls/ssh-host.example.com'), 404);
    assertProblem(await api('GET', '/v1/souls/NOT_A_NAME'), 400);
  });

  it('lists souls in SID order, filtered by coven and status, page by page', async () => {
    for (let i = 0; i < 5; i++) await register(`list-${i}.example.com`, ['listed', `n${i}`]);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const q: string = `/v1/souls?coven=listed&status=pending&limit=2${cursor ? `&cursor=${cursor}` : ''}`;
      const page = await api('GET', q);
      assert.equal(page.status, 200, page.text);
      assert.ok(page.body.items.length <= 2);
      seen.push(...page.body.items.map((s: { sid: string }) => s.sid));
      cursor = page.body.next_cursor;
      pages++;
    } while (cursor);
    assert.deepEqual(
      seen,
      [0, 1, 2, 3, 4].map((i) => `list-${i}.example.com`),
    );
    assert.equal(pages, 3);
    assert.deepEqual(
      (await api('GET', '/v1/souls?coven=n3')).body.items.map((s: { sid: string }) => s.sid),
      ['list-3.example.com'],
    );
    assert.deepEqual((await api('GET', '/v1/souls?status=connected')).body.items, []);
    assertProblem(await api('GET', '/v1/souls?status=online'), 400);
    assertProblem(await api('GET', '/v1/souls?limit=0'), 400);
    assertProblem(await api('GET', '/v1/souls?cursor=bm9wZQ'), 400);
  });

  it('answers 409 to issue-token while a token is active; force (query or body) marks the old one used', async () => {
    const sid = 'reissue.example.com';
    const first = (await register(sid)).body.bootstrap_token;
    assertProblem(await api('POST', `/v1/souls/${sid}/issue-token`), 409, /active bootstrap token/);
    assertProblem(await api('POST', `/v1/souls/${sid}/issue-token`, { body: { force: false } }), 409);
    const viaQuery = await api('POST', `/v1/souls/${sid}/issue-token?force=true`);
    assert.equal(viaQuery.status, 201, viaQuery.text);
    assert.notEqual(viaQuery.body.bootstrap_token, first);
    const viaBody = await api('POST', `/v1/souls/${sid}/issue-token`, { body: { force: true } });
    assert.equal(viaBody.status, 201, viaBody.text);
    assert.equal(await activeTokens(sid), 1);
    const reasons = await tk.keeper.runtime.db('bootstrap_tokens').where({ sid }).orderBy('id').pluck('used_reason');
    assert.deepEqual(reasons, ['superseded', 'superseded', null]);
    assertProblem(await api('POST', `/v1/souls/${sid}/issue-token?force=maybe`), 400);
  });

  it('does not let an expired, unused token block a new one', async () => {
    const sid = 'expired.example.com';
    await register(sid);
    await tk.keeper.runtime
      .db('bootstrap_tokens')
      .where({ sid })
      .update({ expires_at: new Date(Date.now() - 1000) });
    const a = await api('POST', `/v1/souls/${sid}/issue-token`);
    assert.equal(a.status, 201, a.text);
    const reasons = await tk.keeper.runtime.db('bootstrap_tokens').where({ sid }).orderBy('id').pluck('used_reason');
    assert.deepEqual(reasons, ['expired', null]);
  });

  it('leaves exactly one active token after 100 concurrent forced reissues for one host', async () => {
    const sid = 'race-reissue.example.com';
    await register(sid);
    const answers = await Promise.all(
      Array.from({ length: 100 }, () => api('POST', `/v1/souls/${sid}/issue-token?force=true`)),
    );
    assert.deepEqual([...new Set(answers.map((a) => a.status))], [201]);
    assert.equal(new Set(answers.map((a) => a.body.bootstrap_token)).size, 100);
    assert.equal(await activeTokens(sid), 1);
  });

  it('creates exactly one soul from 100 concurrent registrations of one SID', async () => {
    const sid = 'race-register.example.com';
    const answers = await Promise.all(Array.from({ length: 100 }, () => register(sid)));
    const statuses = answers.map((a) => a.status).sort();
    assert.equal(statuses.filter((s) => s === 201).length, 1);
    assert.equal(statuses.filter((s) => s === 409).length, 99);
    assert.equal(Number((await tk.keeper.runtime.db('souls').where({ sid }).count({ n: '*' }))[0].n), 1);
    assert.equal(await activeTokens(sid), 1);
  });
});
