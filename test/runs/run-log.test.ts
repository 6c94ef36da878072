// One structured log line per run start and end with its apply_id (issue 31, "Audit"): a real keeper
// on the real stack, its log captured line by line, an operator's create run and plan.
import assert from 'node:assert/strict';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '../../common/logger';
import { startTestKeeper, type TestKeeper } from '../support/keeper';
import { serviceRepo } from '../support/service-repo';
import { waitFor } from '../agents/harness';
import { clientFor } from '../api/helpers';

describe('the keeper log: one line per run and plan start and end', function () {
  this.timeout(120_000);
  let k: TestKeeper;
  const lines: any[] = [];
  const api = (...args: Parameters<ReturnType<typeof clientFor>>) => clientFor(k)(...args);

  before(async () => {
    k = await startTestKeeper({ log: createLogger({ write: (l) => lines.push(JSON.parse(l)) }) });
  });
  after(async () => {
    await k?.stop();
  });

  it('logs started and ended with apply_id, who started it and the outcome; never the input', async () => {
    const repo = serviceRepo({ tags: ['v1'] });
    assert.equal((await api('POST', '/v1/services', { body: { name: 'motd', git: repo.url, ref: 'v1' } })).status, 201);
    const root = path.join(os.tmpdir(), 'run-log-input-marker');
    const r = await api('POST', '/v1/incarnations', {
      body: { name: 'logged', service: 'motd', covens: ['nobody-here'], input: { root }, allow_empty: true },
    });
    assert.equal(r.status, 202, r.text);
    const applyId = r.body.apply_id as string;
    const mine = (msg: string) => lines.filter((l) => l.msg === msg && l.apply_id === applyId);
    await waitFor(
      'the run to end in the log',
      async () => (mine('run ended').length > 0 ? true : undefined),
      60_000,
      100,
    );
    const [started] = mine('run started');
    assert.deepEqual(
      [started.incarnation, started.operation, started.created_by, started.started_by],
      ['logged', 'create', 'admin', 'operator'],
    );
    const [ended] = mine('run ended');
    assert.deepEqual([ended.status, ended.error, ended.started_by], ['succeeded', null, 'operator']);
    assert.equal(typeof ended.ms, 'number');

    const p = await api('POST', '/v1/incarnations/logged/plans', { body: { operation: 'create', allow_empty: true } });
    assert.equal(p.status, 202, p.text);
    await waitFor(
      'the plan to end in the log',
      async () => (lines.some((l) => l.msg === 'plan ended' && l.apply_id === p.body.plan_id) ? true : undefined),
      60_000,
      100,
    );
    assert.ok(lines.some((l) => l.msg === 'plan started' && l.apply_id === p.body.plan_id));
    assert.ok(!lines.some((l) => JSON.stringify(l).includes('run-log-input-marker')), 'no input in the log');
  });
});
