// A keeper killed with SIGKILL in the middle of a run, then started again with the same config: the
// run still finishes, and every step took effect exactly once. The keeper runs as its own process
// (`bin/keeper run`) so the kill is real: no graceful stop, no flushed buffers, the dispatch activity
// dies with its heartbeat. The service is a real one from a local git repository, rendered by the
// real scenario engine; its steps are slow because each is confirmed by a second send (`until:`
// with a delay), so the kill lands mid-dispatch deterministically.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {
  api,
  gitRepoFrom,
  initRunKeeper,
  settled,
  spawnKeeper,
  startSouls,
  stopRunRig,
  tempDir,
  waitFor,
  type KeeperProcess,
  type TestSoul,
} from './keeper';
import { runDiagnosis } from './diagnose';

const WEB_STEPS = 2;
const DB_STEPS = 7;
// The extra steps run only on the soul in coven db: a task's `on:` selects it by coven, which the
// keeper takes from the registry.
const DB_HOST_GLOB = '"coven:db"';

// Each file is written by the first send (changed) and confirmed by a second one 2 s later
// (unchanged), which makes `until` true: about 2 s per step, on every host at once.
function fileTask(i: number, on?: string): string {
  return `  - name: file ${i}
    module: core.file.present
    params:
      path: "\${input.root}/\${soulprint.self.fqdn}/f${i}"
      content: "f${i} on \${soulprint.self.fqdn}\\n"
      mode: "0644"
    until: "result.changed == false"
    retries: 3
    delay: 2
${on ? `    on: ${on}\n` : ''}`;
}

function writeService(dir: string): void {
  fs.mkdirSync(path.join(dir, 'scenario', 'create'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'service.yml'), 'name: slowfiles\nstate_schema_version: 1\n');
  const tasks = Array.from({ length: DB_STEPS }, (_, i) => fileTask(i, i >= WEB_STEPS ? DB_HOST_GLOB : undefined)).join(
    '',
  );
  fs.writeFileSync(
    path.join(dir, 'scenario', 'create', 'main.yml'),
    `description: Slow files, ${WEB_STEPS} on every host and ${DB_STEPS - WEB_STEPS} more on the db hosts.
input:
  root:
    type: string
state_changes:
  sets:
    root: "\${input.root}"
tasks:
${tasks}`,
  );
}

interface LedgerLine {
  apply_id: string;
  index: number;
  changed: boolean;
  ok: boolean;
}

/** Every record of the run in the soul's ledger (the run's own key and its `until` re-sends), raw. */
function ledgerLines(soul: TestSoul, applyId: string): LedgerLine[] {
  const dir = path.join(soul.dir, 'seed', 'ledger');
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((f) => f === `${applyId}.jsonl` || f.startsWith(`${applyId}:u`))
    .flatMap((f) =>
      fs
        .readFileSync(path.join(dir, f), 'utf8')
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => JSON.parse(l) as LedgerLine),
    );
}

/** The steps a host was sent (not those left out on it). */
const ran = (host: any): any[] => host.steps.filter((st: any) => st.status !== 'skipped');
const key = (l: Pick<LedgerLine, 'apply_id' | 'index'>) => `${l.apply_id}#${l.index}`;

describe('incarnation runs survive a keeper killed mid-dispatch (SIGKILL, restart, exactly once)', function () {
  this.timeout(300_000);
  let k: Awaited<ReturnType<typeof initRunKeeper>>;
  let keeper: KeeperProcess | undefined;
  let root: string;
  let souls: TestSoul[] = [];

  before(async () => {
    root = tempDir('runs-crash-');
    const src = path.join(root, 'slowfiles-src');
    writeService(src);
    const url = gitRepoFrom(src, path.join(root, 'slowfiles.git'), 'v1');
    k = await initRunKeeper();
    keeper = await spawnKeeper(k);
    souls = await startSouls(k, path.join(root, 'souls'), [['web'], ['web'], ['db']]);
    const r = await api(k, 'POST', '/v1/services', { name: 'slowfiles', git: url, ref: 'v1' });
    assert.equal(r.status, 201, JSON.stringify(r.body));
  });
  after(() => stopRunRig({ souls, k, keeper, root }));

  it('finishes ready after kill -9 and restart; each step is in each ledger once, redelivered steps are replayed', async () => {
    const out = path.join(root, 'out');
    const [web1, web2, db1] = souls as [TestSoul, TestSoul, TestSoul];
    const r = await api(k, 'POST', '/v1/incarnations', {
      name: 'slow',
      service: 'slowfiles',
      covens: ['web', 'db'],
      input: { root: out },
    });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    const applyId: string = r.body.apply_id;
    const report = async () => (await api(k, 'GET', `/v1/incarnations/slow/runs/${applyId}`)).body;

    // Mid-dispatch: the web hosts are finished and reported, the db host is still applying (some of
    // its steps in its ledger, not all), so the kill interrupts steps both done and pending.
    let last: unknown;
    const before = await waitFor(
      'the web hosts done and the db host half way',
      async () => {
        const rep = (last = await report());
        const bySid = Object.fromEntries((rep.hosts ?? []).map((h: any) => [h.sid, h]));
        // Every step of the plan is reported on every host; the web hosts' db-only steps as skipped (`on:`).
        const webDone = [web1, web2].every(
          (s) =>
            bySid[s.sid]?.steps.length === DB_STEPS &&
            ran(bySid[s.sid]).length === WEB_STEPS &&
            ran(bySid[s.sid]).every((st: any) => st.status === 'ok'),
        );
        const dbIndexes = new Set(ledgerLines(db1, applyId).map((l) => l.index));
        return webDone && bySid[db1.sid]?.status === 'pending' && dbIndexes.size >= 1 && dbIndexes.size < DB_STEPS - 1
          ? rep
          : undefined;
      },
      60_000,
      100,
    ).catch((err: Error) => {
      err.message += `\n--- run report ---\n${JSON.stringify(last)}\n--- keeper log ---\n${keeper!.log.stderr.slice(-3000)}`;
      throw err;
    });
    const killedAt = new Date();
    keeper!.child.kill('SIGKILL');
    await keeper!.exited;
    // What the souls had recorded when the keeper died (a step in flight may still land just after).
    const recordedAtKill = new Map(souls.map((s) => [s.sid, new Set(ledgerLines(s, applyId).map(key))]));
    assert.equal(before.status, 'running');
    assert.equal(
      before.hosts.find((h: any) => h.sid === db1.sid).steps.length,
      0,
      'the db host had no step reported yet',
    );

    const killedLog = keeper!.log.stderr;
    keeper = await spawnKeeper(k);
    const readyAt = new Date();
    // A run that does not end names why: its report, its workflow's pending activities and last
    // events, both keepers' logs and where each soul is connected (test/runs/diagnose.ts).
    const inc = await settled(k, 'slow', 120_000).catch(async (err: Error) => {
      err.message += `\nkilled ${killedAt.toISOString()}, restarted keeper ready ${readyAt.toISOString()}, now ${new Date().toISOString()}`;
      err.message += `\n${await runDiagnosis(k, 'slow', applyId, { keeper, earlierKeeperLog: killedLog, souls })}`;
      throw err;
    });
    const rep = await report();
    assert.equal(inc.status, 'ready', JSON.stringify(rep.hosts));
    assert.deepEqual(inc.state, { root: out });
    assert.equal(rep.status, 'succeeded');

    for (const s of souls) {
      const n = s === db1 ? DB_STEPS : WEB_STEPS;
      const host = rep.hosts.find((h: any) => h.sid === s.sid);
      assert.deepEqual(
        host.steps.map((st: any) => st.status),
        [...Array(n).fill('ok'), ...Array(DB_STEPS - n).fill('skipped')],
        `${s.sid}: ${JSON.stringify(host.steps)}`,
      );
      assert.ok(host.steps.slice(n).every((st: any) => st.skip_reason === 'on'));

      // Exactly once: each key (the run's apply_id, or an `until` re-send's) once in the ledger, and
      // each step changed its file exactly once (the first send; the confirming one found it done).
      const lines = ledgerLines(s, applyId);
      const counts = new Map<string, number>();
      for (const l of lines) counts.set(key(l), (counts.get(key(l)) ?? 0) + 1);
      assert.deepEqual(
        [...counts.values()].filter((c) => c !== 1),
        [],
        `${s.sid}: a step key recorded more than once: ${JSON.stringify([...counts])}`,
      );
      for (let i = 0; i < n; i++) {
        assert.deepEqual(
          lines.filter((l) => l.index === i && l.changed).map((l) => l.apply_id),
          [applyId],
          `${s.sid} step ${i} changed its file once, on the first send`,
        );
        assert.equal(fs.readFileSync(path.join(out, s.sid, `f${i}`), 'utf8'), `f${i} on ${s.sid}\n`);
      }
      assert.ok(!fs.existsSync(path.join(out, s.sid, `f${n}`)), `${s.sid} has only its own steps' files`);

      // Redelivered after the restart: a step whose sends were all recorded before the kill was
      // answered from the ledger; a step never sent before the kill really ran.
      const atKill = recordedAtKill.get(s.sid)!;
      for (const st of host.steps) {
        const keys = [key({ apply_id: applyId, index: st.index }), key({ apply_id: `${applyId}:u2`, index: st.index })];
        if (keys.every((x) => atKill.has(x)))
          assert.equal(st.replayed, true, `${s.sid} step ${st.index} was redelivered and answered from the ledger`);
        if (keys.every((x) => !atKill.has(x)))
          assert.equal(st.replayed, false, `${s.sid} step ${st.index} ran after the restart`);
      }
    }
    // The web hosts had finished before the kill: all their steps came back from the ledgers.
    for (const s of [web1, web2])
      assert.ok(ran(rep.hosts.find((h: any) => h.sid === s.sid)).every((st: any) => st.replayed));
    // And the db host had steps on both sides of the kill.
    const dbSteps = rep.hosts.find((h: any) => h.sid === db1.sid).steps;
    assert.ok(
      dbSteps.some((st: any) => st.replayed) && dbSteps.some((st: any) => !st.replayed),
      JSON.stringify(dbSteps),
    );
  });
});
