// The soul's metrics listener: off by default; enabled with metrics.port, it listens on 127.0.0.1
// only, and after a real run its scrape counts the run's steps by module and outcome, their
// durations, the ledger's journals and bytes and the certificate's expiry.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import yaml from 'js-yaml';
import { repoRoot } from '../support/repo';
import { freePort } from '../support/ports';
import type { TestKeeper } from '../support/keeper';
import { api, gitRepoFrom, settled, startRunKeeper, tempDir } from '../runs/keeper';
import {
  endpointOf,
  finished,
  soulInit,
  soulRun,
  spawnSoul,
  uniqueSid,
  waitForStatus,
  writeSoulConfig,
  type RunningSoul,
} from './harness';

describe('soul metrics listener (real soul, real run)', function () {
  this.timeout(180_000);
  let k: TestKeeper;
  let root: string;
  let run: RunningSoul | undefined;
  let port: number;
  let sid: string;
  let config: string;

  before(async () => {
    root = tempDir('soul-metrics-');
    k = await startRunKeeper();
    sid = uniqueSid('metrics');
    const reg = await api(k, 'POST', '/v1/souls', { sid, transport: 'agent', covens: ['mon'] });
    assert.equal(reg.status, 201);
    config = writeSoulConfig(path.join(root, sid), sid, [endpointOf(k)]);
    port = await freePort();
    const doc = yaml.load(fs.readFileSync(config, 'utf8')) as Record<string, unknown>;
    fs.writeFileSync(config, yaml.dump({ ...doc, metrics: { port } }));
    const init = await soulInit(sid, config, reg.body.bootstrap_token);
    assert.equal(init.code, 0, init.stderr);
    run = soulRun(sid, config);
    await waitForStatus(k, sid, 'connected', 20_000, run);
  });
  after(async () => {
    await run?.kill();
    await k?.stop();
    fs.rmSync(root, { recursive: true, force: true });
  });

  const scrape = async () => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const value = (text: string, series: string) => {
    const line = text.split('\n').find((l) => l.startsWith(series + ' '));
    return line === undefined ? undefined : Number(line.slice(series.length + 1));
  };

  it('counts the steps of a run by module and outcome, with durations, journals and the certificate expiry', async () => {
    const url = gitRepoFrom(
      path.join(repoRoot(), 'test', 'fixtures', 'services', 'motd'),
      path.join(root, 'motd.git'),
      'v3',
    );
    assert.equal((await api(k, 'POST', '/v1/services', { name: 'motd', git: url, ref: 'v3' })).status, 201);
    const input = { root: path.join(root, 'out'), message: 'measured', package: 'git' };
    assert.equal(
      (await api(k, 'POST', '/v1/incarnations', { name: 'motd-mon', service: 'motd', covens: ['mon'], input })).status,
      202,
    );
    assert.equal((await settled(k, 'motd-mon')).status, 'ready');

    const text = await scrape();
    assert.equal(value(text, 'soul_steps_total{module="core.file.rendered",outcome="changed"}'), 1, text);
    assert.equal(value(text, 'soul_steps_total{module="core.file.present",outcome="changed"}'), 1);
    const pkg = ['ok', 'changed'].map(
      (o) => value(text, `soul_steps_total{module="core.pkg.installed",outcome="${o}"}`) ?? 0,
    );
    assert.equal(pkg[0]! + pkg[1]!, 1, 'the package step is counted once');
    assert.equal(value(text, 'soul_step_duration_seconds_count{module="core.file.rendered"}'), 1);
    assert.equal(value(text, 'soul_ledger_journals'), 1, 'one apply, one journal');
    const ledger = path.join(root, sid, 'seed', 'ledger');
    const onDisk = fs
      .readdirSync(ledger)
      .filter((f) => f.endsWith('.jsonl'))
      .reduce((n, f) => n + fs.statSync(path.join(ledger, f)).size, 0);
    assert.ok(onDisk > 0);
    assert.equal(value(text, 'soul_ledger_bytes'), onDisk, "the ledger's bytes are its journals' sizes");
    const notAfter = value(text, 'soul_certificate_not_after_seconds')!;
    assert.ok(notAfter * 1000 > Date.now(), 'the certificate expiry is in the future');
    assert.ok((value(text, 'soul_process_resident_memory_bytes') ?? 0) > 0, 'process metrics are there');
    assert.equal(value(text, 'soul_stream_reconnects_total'), 0);
  });

  it('listens on 127.0.0.1 only, and answers only GET /metrics', async () => {
    const addrs = fs
      .readFileSync('/proc/net/tcp', 'utf8')
      .split('\n')
      .slice(1)
      .filter(Boolean)
      .map((l) => l.trim().split(/\s+/))
      .filter((f) => f[3] === '0A')
      .map((f) => f[1]!);
    const hex = port.toString(16).toUpperCase().padStart(4, '0');
    assert.deepEqual(
      addrs.filter((a) => a.endsWith(`:${hex}`)),
      [`0100007F:${hex}`],
    );
    assert.equal((await fetch(`http://127.0.0.1:${port}/`)).status, 404);
  });

  // Last: it stops the soul.
  it('names the keeper it is on: soul_connected{kid} and soul status (kid, endpoint, since, session, ledger); after a stop, stopped with the last keeper', async () => {
    const kid = k.config.kid;
    const text = await scrape();
    assert.equal(value(text, `soul_connected{kid="${kid}"}`), 1, text);
    const status = await finished(spawnSoul(sid, ['status', `--config=${config}`]));
    assert.equal(status.code, 0, status.stderr);
    const lines = status.stdout.trim().split('\n');
    assert.equal(lines[0], `sid: ${sid}`);
    assert.ok(lines.includes('state: connected'), status.stdout);
    assert.ok(lines.includes(`keeper: ${kid}`), status.stdout);
    assert.ok(lines.includes(`endpoint: ${endpointOf(k).host}:${endpointOf(k).event_stream_port}`), status.stdout);
    assert.ok(lines.some((l) => /^since: \d{4}-\d\d-\d\dT/.test(l)));
    assert.ok(lines.some((l) => /^session: \S+/.test(l)));
    assert.ok(lines.some((l) => /^ledger: \d+ journals, \d+ bytes$/.test(l)));
    // The keeper's registry agrees on the keeper the soul names.
    assert.equal((await api(k, 'GET', `/v1/souls/${sid}`)).body.connected_kid, kid);

    await run!.kill('SIGTERM');
    run = undefined;
    const after = await finished(spawnSoul(sid, ['status', `--config=${config}`]));
    assert.equal(after.code, 1);
    assert.match(after.stdout, /^state: stopped$/m);
    assert.match(after.stdout, new RegExp(`^last keeper: ${kid}$`, 'm'));
  });
});
