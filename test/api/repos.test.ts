// The repositories other layers call (the agent hub during `soul init` and on the event stream),
// against a real PostgreSQL database with the project's migrations.
import assert from 'node:assert/strict';
import type { Knex } from 'knex';
import { connectDb } from '../../db/connect';
import { migrateLatest } from '../../db/migrate';
import { issueBootstrapToken, spendBootstrapToken } from '../../db/repos/bootstrap-tokens';
import { RepoConflict, RepoNotFound } from '../../db/repos/errors';
import { getSoul, listSouls, markConnected, markDisconnected, markOnboarded, registerSoul } from '../../db/repos/souls';
import { createTestDatabase, type TestDatabase } from '../support/database';

const DAY = 24 * 3600_000;

describe('db/repos: souls and bootstrap tokens', function () {
  let tdb: TestDatabase;
  let db: Knex;

  before(async () => {
    tdb = await createTestDatabase('repos');
    db = connectDb(tdb.dsn, { poolMax: 25 });
    await migrateLatest(db);
  });
  after(async () => {
    await db?.destroy();
    await tdb?.drop();
  });

  it('spends a token once: the first spend returns the SID and covens, the next says used', async () => {
    const { token } = await registerSoul(
      db,
      { sid: 'spend-1.example.com', transport: 'agent', covens: ['db', 'eu'] },
      { tokenTtlMs: DAY },
    );
    assert.deepEqual(await spendBootstrapToken(db, token), {
      ok: true,
      sid: 'spend-1.example.com',
      covens: ['db', 'eu'],
    });
    assert.deepEqual(await spendBootstrapToken(db, token), { ok: false, reason: 'used' });
  });

  it('lets exactly one of 20 concurrent spends of one token win', async () => {
    const { token } = await registerSoul(
      db,
      { sid: 'spend-race.example.com', transport: 'agent', covens: [] },
      { tokenTtlMs: DAY },
    );
    const results = await Promise.all(Array.from({ length: 20 }, () => spendBootstrapToken(db, token)));
    assert.equal(results.filter((r) => r.ok).length, 1);
    assert.ok(results.filter((r) => !r.ok).every((r) => !r.ok && r.reason === 'used'));
  });

  it('says invalid for unknown or malformed tokens, expired past the TTL, and used for a superseded token', async () => {
    assert.deepEqual(await spendBootstrapToken(db, 'kbt_' + 'A'.repeat(43)), { ok: false, reason: 'invalid' });
    assert.deepEqual(await spendBootstrapToken(db, "'; drop table souls; --"), { ok: false, reason: 'invalid' });
    const { token } = await registerSoul(
      db,
      { sid: 'spend-exp.example.com', transport: 'agent', covens: [] },
      { tokenTtlMs: DAY },
    );
    assert.deepEqual(await spendBootstrapToken(db, token, { now: new Date(Date.now() + DAY + 1000) }), {
      ok: false,
      reason: 'expired',
    });
    assert.deepEqual(
      await spendBootstrapToken(db, token),
      { ok: false, reason: 'expired' },
      'an expired token stays expired',
    );
    const old = (
      await registerSoul(db, { sid: 'spend-sup.example.com', transport: 'agent', covens: [] }, { tokenTtlMs: DAY })
    ).token;
    const fresh = await issueBootstrapToken(db, 'spend-sup.example.com', { force: true, ttlMs: DAY });
    assert.deepEqual(await spendBootstrapToken(db, old), { ok: false, reason: 'used' });
    assert.equal((await spendBootstrapToken(db, fresh.token)).ok, true);
  });

  it('refuses to issue while a token is active unless forced, and for an unknown soul', async () => {
    await registerSoul(db, { sid: 'issue.example.com', transport: 'agent', covens: [] }, { tokenTtlMs: DAY });
    await assert.rejects(
      issueBootstrapToken(db, 'issue.example.com', { force: false, ttlMs: DAY }),
      (e: unknown) => e instanceof RepoConflict && e.kind === 'active-token',
    );
    await assert.rejects(issueBootstrapToken(db, 'ghost.example.com', { force: true, ttlMs: DAY }), RepoNotFound);
    const later = new Date(Date.now() + 2 * DAY);
    const { expiresAt } = await issueBootstrapToken(db, 'issue.example.com', { force: false, ttlMs: DAY, now: later });
    assert.equal(expiresAt.getTime(), later.getTime() + DAY, 'an expired token does not block');
  });

  it('records onboarding, connection and disconnection; a stale keeper cannot mark a newer connection lost', async () => {
    const sid = 'presence.example.com';
    await registerSoul(db, { sid, transport: 'agent', covens: ['web'] }, { tokenTtlMs: DAY });
    assert.equal(await markOnboarded(db, sid, '1a:2b'), true);
    assert.equal(await markConnected(db, sid, 'k-new', { os: 'debian' }), true);
    assert.equal(await markDisconnected(db, sid, { kid: 'k-old' }), false);
    assert.equal((await getSoul(db, sid))?.status, 'connected');
    assert.deepEqual(
      (await listSouls(db, { status: 'connected' }, { limit: 10 })).items.map((s) => s.sid),
      [sid],
    );
    assert.equal(await markDisconnected(db, sid, { kid: 'k-new' }), true);
    const soul = await getSoul(db, sid);
    assert.equal(soul?.status, 'disconnected');
    assert.ok(soul?.onboarded_at instanceof Date);
    assert.equal(await markConnected(db, 'ghost.example.com', 'k', null), false);
  });
});
