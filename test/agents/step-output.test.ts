// A host's step output on a real keeper, real run: the soul (its real identity, onboarded by soul
// init, answering over the stream as a compromised host would) prints 3 MiB full of terminal escape
// sequences; the run's row in PostgreSQL and the run report keep 64 KiB of it, escaped, and count
// the rest. The same cleaning holds for a short answer with an OSC title sequence and a BEL.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestKeeper, type TestKeeper } from '../support/keeper';
import { repoRoot } from '../support/repo';
import { gitRepoFrom, settled } from '../runs/keeper';
import { api, endpointOf, soulInit, uniqueSid, waitForStatus, writeSoulConfig } from './harness';
import { openStream, readSeed, soulprintFor, type RawStream } from './raw-client';

const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

describe('step output: capped and escaped before storage and before any answer', function () {
  this.timeout(180_000);
  let k: TestKeeper;
  let dir: string;
  let stream: RawStream;
  let sid: string;
  let beat: NodeJS.Timeout | undefined;

  before(async () => {
    k = await startTestKeeper();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'step-output-'));
    sid = uniqueSid('loud');
    const r = await api(k, 'POST', '/v1/souls', { sid, transport: 'agent', covens: ['web'] });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const config = writeSoulConfig(path.join(dir, sid), sid, [endpointOf(k)]);
    const init = await soulInit(sid, config, r.body.bootstrap_token);
    assert.equal(init.code, 0, init.stderr);
    stream = openStream(k.config.listen.grpc.event_stream.addr, readSeed(path.join(dir, sid, 'seed')));
    stream.send({ hello: { soulprint: soulprintFor(sid), soul_version: 'test' } });
    await stream.next('welcome');
    // A live soul heartbeats; a silent stream is closed after the lease TTL.
    let seq = 0;
    beat = setInterval(() => stream.send({ heartbeat: { seq: ++seq } }), 500);
    await waitForStatus(k, sid, 'connected');
    const url = gitRepoFrom(
      path.join(repoRoot(), 'test', 'fixtures', 'services', 'note'),
      path.join(dir, 'note.git'),
      'v1',
    );
    const s = await api(k, 'POST', '/v1/services', { name: 'note', git: url, ref: 'v1' });
    assert.equal(s.status, 201, JSON.stringify(s.body));
  });
  after(async () => {
    clearInterval(beat);
    stream?.close();
    await k?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a step printing 3 MiB with escape codes is stored and served capped at 64 KiB and escaped', async () => {
    const loud = '\u001b[31mERROR\u001b[0m \u001b]0;pwned\u0007\r'.repeat((3 * 1024 * 1024) / 25);
    const outputs = [loud, '\u001b]0;retitled\u0007wrote the note\u009b2J'];
    const answered = new Set<string>();
    let done = false;
    // The host: answers each step the keeper sends, step 0 with the 3 MiB output.
    const host = (async () => {
      while (!done) {
        for (const m of stream.received) {
          if (m.msg !== 'step_request' || answered.has(m.step_request.request_id)) continue;
          const req = m.step_request;
          answered.add(req.request_id);
          stream.send({
            step_result: {
              request_id: req.request_id,
              apply_id: req.apply_id,
              step_index: req.step_index,
              changed: true,
              ok: true,
              output: outputs[req.step_index] ?? '',
              started_at_ms: Date.now(),
              finished_at_ms: Date.now(),
              replayed: false,
              diff_json: '',
              files: [],
            },
          });
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    let applyId: string;
    try {
      const r = await api(k, 'POST', '/v1/incarnations', {
        name: 'loud',
        service: 'note',
        covens: ['web'],
        input: { root: dir, greeting: 'hi' },
      });
      assert.equal(r.status, 202, JSON.stringify(r.body));
      applyId = r.body.apply_id;
      const inc = await settled(k, 'loud');
      if (inc.status !== 'ready') {
        const rep = (await api(k, 'GET', `/v1/incarnations/loud/runs/${applyId}`)).body;
        assert.fail(`the run did not succeed: ${JSON.stringify(rep.hosts).slice(0, 2000)}`);
      }
    } finally {
      done = true;
      await host;
    }
    assert.equal(answered.size, 2, 'both steps were sent to the host');

    const rows = await k.keeper.runtime
      .db('run_steps')
      .where({ apply_id: applyId })
      .orderBy('step_index')
      .select('step_index', 'output');
    const report = (await api(k, 'GET', `/v1/incarnations/loud/runs/${applyId}`)).body;
    const served = report.hosts[0].steps.map((s: { output: string }) => s.output);
    for (const [where, [big, short]] of [
      ['run_steps', rows.map((r: { output: string }) => r.output)],
      ['the run report', served],
    ] as const) {
      assert.ok(!CONTROL.test(big!) && !CONTROL.test(short!), `${where}: no control character is kept`);
      const m = /^([^]*)\n\.\.\. (\d+) more bytes$/.exec(big!);
      assert.ok(m, `${where}: the big output ends with the count of what was cut`);
      assert.ok(Buffer.byteLength(m[1]!) <= 64 * 1024 && Buffer.byteLength(m[1]!) > 60 * 1024, `${where}: 64 KiB kept`);
      assert.ok(
        m[1]!.startsWith('\\x1b[31mERROR\\x1b[0m \\x1b]0;pwned\\x07\\x0d\\x1b[31mERROR'),
        `${where}: escaped, readable`,
      );
      assert.ok(Number(m[2]) > 3 * 1024 * 1024 - 64 * 1024, `${where}: the rest is counted`);
      assert.equal(short, '\\x1b]0;retitled\\x07wrote the note\\x9b2J', where);
    }
  });
});
