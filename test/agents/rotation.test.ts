// Certificate rotation on the live stream, with a real soul on a real keeper and a PKI role whose
// certificates live 15 seconds (the soul renews at two thirds, about every 10 s): the soul stays
// connected through at least three rotations, each with a new key; steps sent all along are all
// answered (none interrupted or refused by a rotation); both sides count the rotations; the API
// shows the new expiry. Then a soul whose certificate expired while it was stopped is told what
// to do, and a new token with soul init bring it back.
import assert from 'node:assert/strict';
import { X509Certificate, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import yaml from 'js-yaml';
import { gitRepoFrom, settled } from '../runs/keeper';
import { startTestKeeper, type TestKeeper } from '../support/keeper';
import { repoRoot } from '../support/repo';
import { freePort } from '../support/ports';
import { deleteRole, keeperToken, putRole, roleName, soulRoleParams, useToken } from '../support/pki';
import {
  api,
  endpointOf,
  register,
  soulInit,
  soulRun,
  soulStatus,
  uniqueSid,
  waitFor,
  waitForStatus,
  writeSoulConfig,
  type RunningSoul,
} from './harness';

/** A series' value; the keeper adds labels of its own (kid), so `name{a="b"}` matches `name{a="b",...}` too. */
const metric = (text: string, series: string): number => {
  const open = series.endsWith('}') ? series.slice(0, -1) : series;
  const line = text.split('\n').find((l) => l.startsWith(open) && /^[ ,}{]/.test(l.slice(open.length)));
  return line === undefined ? 0 : Number(line.split(' ').pop());
};

describe('soul certificate rotation on the live stream (real soul, real keeper, 15 s certificates)', function () {
  this.timeout(180_000);
  let k: TestKeeper;
  let dir: string;
  let role: string;
  const running: RunningSoul[] = [];
  const sid = uniqueSid('rotate');
  let config: string;
  let soulMetricsPort: number;

  before(async () => {
    role = roleName('soul-short');
    await putRole(role, soulRoleParams({ max_ttl: '10m', ttl: '15s' }));
    const token = await keeperToken();
    k = await startTestKeeper({ mutate: (doc) => useToken(doc, token, role, '15s') });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'souls-rotate-'));
  });
  after(async () => {
    await Promise.all(running.map((r) => r.kill()));
    await k?.stop();
    await deleteRole(role);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('stays connected through three rotations, a new key each time, every step sent meanwhile answered', async () => {
    config = writeSoulConfig(path.join(dir, sid), sid, [endpointOf(k)]);
    soulMetricsPort = await freePort();
    const doc = yaml.load(fs.readFileSync(config, 'utf8')) as Record<string, unknown>;
    fs.writeFileSync(config, yaml.dump({ ...doc, metrics: { port: soulMetricsPort } }));
    assert.equal((await soulInit(sid, config, await register(k, sid))).code, 0);
    const run = soulRun(sid, config);
    running.push(run);
    await waitForStatus(k, sid, 'connected', 20_000, run);
    const firstNotAfter = (await soulStatus(k, sid)).cert_not_after;
    assert.ok(firstNotAfter, 'the API shows the certificate expiry');

    // The public key of the certificate the soul holds, sampled as it changes on disk.
    const certFile = path.join(dir, sid, 'seed', 'cert.pem');
    const keys = new Set<string>();
    const serials = new Set<string>();
    const sample = () => {
      try {
        const cert = new X509Certificate(fs.readFileSync(certFile));
        keys.add(cert.publicKey.export({ type: 'spki', format: 'der' }).toString('base64'));
        serials.add(cert.serialNumber);
      } catch {
        /* being replaced */
      }
    };
    sample();
    const sampler = setInterval(sample, 100);

    // Steps back to back for the whole time, each taking a moment, so rotations fall on steps in
    // flight and on steps sent while the stream is being replaced.
    const target = path.join(dir, 'steps');
    let answered = 0;
    const failures: string[] = [];
    let stepping = true;
    const stepper = (async () => {
      for (let i = 0; stepping; i++) {
        try {
          const r = await k.keeper.hub.sessions.sendStep(
            sid,
            {
              applyId: randomUUID(),
              stepIndex: 0,
              module: 'core.file.present',
              params: { path: path.join(target, `f${i % 5}`), content: `step ${i}\n` },
            },
            { timeoutMs: 30_000 },
          );
          if (r.ok) answered++;
          else failures.push(`step ${i}: ${r.output}`);
        } catch (err) {
          failures.push(`step ${i}: ${(err as Error).message}`);
        }
        await new Promise((res) => setTimeout(res, 150));
      }
    })();

    try {
      await waitFor('three rotations', async () => keys.size >= 4, 70_000, 500);
    } finally {
      stepping = false;
      await stepper;
      clearInterval(sampler);
    }
    assert.deepEqual(failures, [], 'no step was refused or interrupted by a rotation');
    assert.ok(answered > 20, `steps answered: ${answered}`);
    assert.ok(keys.size >= 4 && serials.size >= 4, 'each rotation brought a new key and serial');
    assert.equal(run.child.exitCode, null, 'the soul kept running');
    assert.doesNotMatch(run.log.stderr, /"stream lost"|endpoint refused/, 'no stream was lost or refused');
    assert.equal(fs.existsSync(path.join(dir, sid, 'seed', 'next')), false, 'the last renewed identity was promoted');

    const rec = await soulStatus(k, sid);
    assert.equal(rec.status, 'connected');
    assert.ok(Date.parse(rec.cert_not_after) > Date.parse(firstNotAfter), 'cert_not_after moved on');
    const current = new X509Certificate(fs.readFileSync(certFile));
    assert.equal(
      Date.parse(rec.cert_not_after),
      Date.parse(current.validTo),
      'the API shows the expiry of the certificate the soul holds',
    );

    const keeperText = await (await fetch(`${k.metricsUrl}/metrics`)).text();
    assert.ok(metric(keeperText, 'keeper_soul_certificate_renewals_total{outcome="renewed"}') >= 3);
    assert.ok(metric(keeperText, 'keeper_soul_certificate_renewals_total{outcome="promoted"}') >= 3);
    const soulText = await (await fetch(`http://127.0.0.1:${soulMetricsPort}/metrics`)).text();
    assert.ok(metric(soulText, 'soul_certificate_rotations_total{outcome="renewed"}') >= 3);
    assert.equal(metric(soulText, 'soul_certificate_not_after_seconds'), Date.parse(current.validTo) / 1000);
  });

  it('the previous certificate is refused once the renewed one has connected', async () => {
    // The copy an attacker might have kept of an older identity: here, the first of this soul's
    // keys is gone, so take the current one and wait for one more rotation.
    const seed = path.join(dir, sid, 'seed');
    const oldDir = path.join(dir, 'old', 'seed');
    fs.mkdirSync(oldDir, { recursive: true, mode: 0o700 });
    for (const f of ['key.pem', 'cert.pem', 'chain.pem']) fs.copyFileSync(path.join(seed, f), path.join(oldDir, f));
    const oldSerial = new X509Certificate(fs.readFileSync(path.join(oldDir, 'cert.pem'))).serialNumber;
    await waitFor(
      'one more rotation',
      async () => new X509Certificate(fs.readFileSync(path.join(seed, 'cert.pem'))).serialNumber !== oldSerial,
      30_000,
      200,
    );
    const doc = yaml.load(fs.readFileSync(config, 'utf8')) as { paths: Record<string, string> };
    const oldConfig = path.join(dir, 'old', 'soul.yml');
    fs.writeFileSync(
      oldConfig,
      yaml.dump({ ...doc, metrics: undefined, paths: { modules: path.join(dir, 'old', 'modules'), seed: oldDir } }),
    );
    const handshakes = async () =>
      metric(
        await (await fetch(`${k.metricsUrl}/metrics`)).text(),
        'keeper_handshakes_total{listener="event_stream",outcome="old_certificate"}',
      );
    const before = await handshakes();
    const old = soulRun(sid, oldConfig);
    running.push(old);
    await waitFor('the retired certificate to be refused', async () => (await handshakes()) > before, 20_000);
    await old.kill();
    assert.equal(running[0]!.child.exitCode, null, 'the live soul was not superseded');
  });

  it('a certificate that expired while the soul was stopped: a clear error, then a new token and soul init bring it back', async () => {
    await running[0]!.kill('SIGTERM');
    const cert = new X509Certificate(fs.readFileSync(path.join(dir, sid, 'seed', 'cert.pem')));
    const wait = Date.parse(cert.validTo) - Date.now() + 1000;
    if (wait > 0) await new Promise((res) => setTimeout(res, wait));
    const expired = await soulRun(sid, config).done;
    assert.equal(expired.code, 1);
    assert.match(
      expired.stderr,
      new RegExp(
        `soul: the certificate of ${sid.replace(/\./g, '\\.')} expired at .* while the soul was not connected`,
      ),
    );
    assert.match(
      expired.stderr,
      /fix: an operator reissues a bootstrap token \(keeperctl souls issue-token .* --force/,
    );

    const token = await api(k, 'POST', `/v1/souls/${sid}/issue-token`, { force: true });
    assert.equal(token.status, 201);
    const init = await soulInit(sid, config, token.body.bootstrap_token);
    assert.equal(init.code, 0, init.stderr);
    const back = soulRun(sid, config);
    running.push(back);
    await waitForStatus(k, sid, 'connected', 20_000, back);
  });

  it('runs started while the certificate rotates finish', async () => {
    const soul = running[running.length - 1]!;
    const url = gitRepoFrom(
      path.join(repoRoot(), 'test', 'fixtures', 'services', 'motd'),
      path.join(dir, 'motd.git'),
      'v3',
    );
    assert.equal((await api(k, 'POST', '/v1/services', { name: 'motd', git: url, ref: 'v3' })).status, 201);
    const input = (message: string) => ({ root: path.join(dir, 'runs'), message, package: 'git' });
    assert.equal(
      (
        await api(k, 'POST', '/v1/incarnations', {
          name: 'motd-rot',
          service: 'motd',
          covens: ['test'],
          input: input('m0'),
        })
      ).status,
      202,
    );
    assert.equal((await settled(k, 'motd-rot')).status, 'ready');

    // When the soul switched certificates: the moment its renewed identity became the main one.
    const certFile = path.join(dir, sid, 'seed', 'cert.pem');
    const switches: number[] = [];
    let serial = new X509Certificate(fs.readFileSync(certFile)).serialNumber;
    const sampler = setInterval(() => {
      try {
        const now = new X509Certificate(fs.readFileSync(certFile)).serialNumber;
        if (now !== serial) {
          serial = now;
          switches.push(Date.now());
        }
      } catch {
        /* being replaced */
      }
    }, 50);
    const runs: { start: number; end: number }[] = [];
    const during = () => switches.filter((t) => runs.some((r) => r.start < t && t < r.end)).length;
    try {
      for (let i = 1; (during() < 1 || runs.length < 3) && i < 60; i++) {
        const start = Date.now();
        const r = await api(k, 'POST', '/v1/incarnations/motd-rot/runs', {
          operation: 'create',
          input: input(`m${i}`),
        });
        assert.equal(r.status, 202, JSON.stringify(r.body));
        const inc = await settled(k, 'motd-rot');
        runs.push({ start, end: Date.now() });
        const report = (await api(k, 'GET', `/v1/incarnations/motd-rot/runs/${r.body.apply_id}`)).body;
        assert.equal(inc.status, 'ready', `run ${i}: ${JSON.stringify(report)}`);
        assert.ok(['ok', 'changed'].includes(report.hosts[0].status), `run ${i}: ${JSON.stringify(report.hosts[0])}`);
      }
    } finally {
      clearInterval(sampler);
    }
    assert.ok(during() >= 1, `a rotation fell inside a run (switches ${switches.length}, runs ${runs.length})`);
    assert.equal(soul.child.exitCode, null);
  });
});
