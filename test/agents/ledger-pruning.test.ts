// A running soul prunes its step ledger by itself (at start, then every 6 hours), keeping journals
// for `ledger.retention_days` (30 by default): a real `soul run` against a real keeper, with
// journals of old applies planted in its ledger directory.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import yaml from 'js-yaml';
import { startTestKeeper, type TestKeeper } from '../support/keeper';
import {
  endpointOf,
  register,
  soulInit,
  soulRun,
  uniqueSid,
  waitFor,
  waitForStatus,
  writeSoulConfig,
  type RunningSoul,
} from './harness';

const DAY = 86_400_000;

describe('soul ledger pruning on a schedule (real soul, real keeper)', function () {
  this.timeout(120_000);
  let k: TestKeeper;
  let dir: string;
  let run: RunningSoul | undefined;

  before(async () => {
    k = await startTestKeeper();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'soul-prune-'));
  });
  after(async () => {
    await run?.kill();
    await k?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  function plant(ledger: string, name: string, ageDays: number): void {
    const file = path.join(ledger, `${name}.jsonl`);
    fs.writeFileSync(file, '');
    const t = new Date(Date.now() - ageDays * DAY);
    fs.utimesSync(file, t, t);
  }

  it('drops journals past the retention when it starts, keeps the recent ones; the retention is configurable', async () => {
    const sid = uniqueSid('prune');
    const token = await register(k, sid);
    const config = writeSoulConfig(path.join(dir, sid), sid, [endpointOf(k)]);
    const init = await soulInit(sid, config, token);
    assert.equal(init.code, 0, init.stderr);
    const ledger = path.join(dir, sid, 'seed', 'ledger');
    fs.mkdirSync(ledger, { recursive: true });
    plant(ledger, 'apply-45-days-old', 45);
    plant(ledger, 'apply-10-days-old', 10);
    plant(ledger, 'apply-today', 0);
    const journals = () =>
      fs
        .readdirSync(ledger)
        .filter((f) => f.endsWith('.jsonl'))
        .sort();

    run = soulRun(sid, config);
    await waitForStatus(k, sid, 'connected', 20_000, run);
    await waitFor('the old journal to be pruned', async () => !journals().includes('apply-45-days-old.jsonl'));
    assert.deepEqual(journals(), ['apply-10-days-old.jsonl', 'apply-today.jsonl'], 'the default keeps 30 days');

    await run.kill('SIGTERM');
    const doc = yaml.load(fs.readFileSync(config, 'utf8')) as Record<string, unknown>;
    fs.writeFileSync(config, yaml.dump({ ...doc, ledger: { retention_days: 7 } }));
    run = soulRun(sid, config);
    await waitForStatus(k, sid, 'connected', 20_000, run);
    await waitFor('the 10-day journal to be pruned', async () => !journals().includes('apply-10-days-old.jsonl'));
    assert.deepEqual(journals(), ['apply-today.jsonl']);
  });
});
