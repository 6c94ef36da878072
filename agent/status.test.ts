import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readStatus, statusReport, writeStatus } from './status';

describe('agent/status (soul status)', () => {
  let seed: string;
  beforeEach(() => {
    seed = fs.mkdtempSync(path.join(os.tmpdir(), 'soul-status-'));
  });
  afterEach(() => fs.rmSync(seed, { recursive: true, force: true }));

  const certificate = () =>
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-subj',
        '/CN=web-1',
        '-days',
        '2',
        '-keyout',
        path.join(seed, 'key.pem'),
        '-out',
        path.join(seed, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );

  it('before soul init: no identity, never connected, exit 1', async () => {
    const r = await statusReport({ sid: 'web-1', seed });
    assert.equal(r.code, 1);
    assert.deepEqual(r.lines.slice(0, 3), [
      'sid: web-1',
      `identity: none under ${seed} (run soul init first)`,
      'state: never connected (no soul run has reached a keeper with this identity yet)',
    ]);
    assert.equal(r.lines.at(-1), 'ledger: 0 journals, 0 bytes');
  });

  it('connected: the keeper kid, endpoint, since when, the session, the certificate and the ledger size; exit 0', async () => {
    certificate();
    fs.mkdirSync(path.join(seed, 'ledger'));
    fs.writeFileSync(path.join(seed, 'ledger', 'a.jsonl'), 'x'.repeat(120));
    writeStatus(seed, {
      state: 'connected',
      kid: 'keeper-2',
      endpoint: 'keeper-2.example.com:9443',
      session_id: 'sess-1',
      since: '2026-11-26T12:00:00.000Z',
      pid: process.pid,
    });
    const r = await statusReport({ sid: 'web-1', seed, now: new Date('2026-11-26T12:05:00Z') });
    assert.equal(r.code, 0);
    assert.match(r.lines[1]!, /^certificate: serial [0-9a-f]+, valid until 20\d\d-/);
    assert.deepEqual(r.lines.slice(2), [
      'state: connected',
      'since: 2026-11-26T12:00:00.000Z (5 min ago)',
      'keeper: keeper-2',
      'endpoint: keeper-2.example.com:9443',
      'session: sess-1',
      `pid: ${process.pid}`,
      'ledger: 1 journals, 120 bytes',
    ]);
  });

  it('a soul killed without writing its stop (its pid gone) shows as stopped with its last keeper; exit 1', async () => {
    const dead = spawnSync('true').pid!;
    writeStatus(seed, {
      state: 'connected',
      kid: 'keeper-1',
      endpoint: 'k:9443',
      session_id: 's',
      since: '2026-11-26T12:00:00.000Z',
      pid: dead,
    });
    const r = await statusReport({ sid: 'web-1', seed, now: new Date('2026-11-26T12:00:30Z') });
    assert.equal(r.code, 1);
    assert.ok(r.lines.includes('state: stopped (soul run is not running)'), r.lines.join('\n'));
    assert.ok(r.lines.includes('last keeper: keeper-1'));
    assert.ok(!r.lines.some((l) => l.startsWith('session:')));
  });

  it('disconnected: the reason, and the file is replaced whole', async () => {
    writeStatus(seed, {
      state: 'disconnected',
      kid: 'keeper-1',
      since: '2026-11-26T12:00:00.000Z',
      reason: 'goodbye: shutdown',
      pid: process.pid,
    });
    const r = await statusReport({ sid: 'web-1', seed });
    assert.equal(r.code, 1);
    assert.ok(r.lines.includes('state: disconnected'));
    assert.ok(r.lines.includes('reason: goodbye: shutdown'));
    assert.deepEqual(
      fs.readdirSync(seed).filter((f) => f.includes('status')),
      ['status.json'],
    );
    assert.equal(readStatus(seed)?.kid, 'keeper-1');
  });
});
