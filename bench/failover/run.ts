// Benchmark (not a test): where the seconds of a failover go (issue 33, docs/reliability.md "Keeper A
// killed"). The two-keeper fault scene (test/faults/rig.ts) with N real souls (`soul run`, default 20)
// on keeper A by priority and B as their second endpoint; a run of the slow service (2 steps, each
// confirmed by a re-send 1 s later) is started, A is killed with SIGKILL once the first step is in a
// ledger, and each phase is timed from the kill:
//   claim_lapsed_ms     A's kid claim gone from the cache (read here every 20 ms)
//   first_soul_on_b_ms  the first soul's presence lease names B (read here every 20 ms)
//   souls_on_b_ms       every soul's presence lease names B
//   keeper_lost_ms      the history's KeeperLost failure of A's dispatch (B ended it)
//   reroute_ms          the routing after it recorded (a local activity: the hosts located again)
//   dispatch_on_b_ms    the first dispatch activity started by B's worker
//   ready_ms            the run's workflow completed (and the incarnation `ready`, read every 100 ms)
// plus the load average and the lowest remaining lifetime of B's own kid claim (its margin). One trial per run of this program, so before/after builds can be interleaved
// in one session (each from its own checkout):
//   KEEPER_STACK_DIR=... node dist/bench/failover/run.js --label after [--souls 20] [--out FILE]
// --no-kill: the same run and the same moment, nothing killed: ready_ms is then what the run still
// had to do anyway (its steps and their 1 s confirmations), the floor under any failover figure.
// Appends one JSON line to FILE (default bench/results/failover.jsonl). Needs the local stack.
// bench/failover/results.jsonl: the session of 2026-11-26 (before: integ; after: this branch, its
// first two runs with a 2 s claim lifetime, the next two with 2.5 s, the last with the shipped 3 s).
// bench/failover/results-stop6.jsonl: the session of 2026-11-26 23:25-23:55 UTC (before: integ
// a2c20de; after: the sweep once a second and the souls' quick reconnect; no-kill: the floor),
// interleaved; the soak bench loaded the machine during the first trials (load 25 to 8).
// bench/failover/results-stop7.jsonl: 2026-11-27 00:00-00:05 UTC, quiet: quiet-after is stop 6's build
// (the claim's lapse), quiet-moved adds the silent-keeper-and-souls-moved sign (runs/failover.ts).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@temporalio/client';
import { createClient } from 'redis';
import { startRig, midDispatch, type Rig } from '../../test/faults/rig';
import { api, waitFor } from '../../test/runs/keeper';
import { stackEnv } from '../../test/support/stack-env';
import { connectStackTemporal } from '../../test/support/temporal-client';
import { repoRoot } from '../../test/support/repo';

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : dflt;
}

async function main(): Promise<void> {
  const label = arg('label', 'run');
  const kill = !process.argv.includes('--no-kill');
  const souls = Number(arg('souls', '20'));
  const out = arg('out', path.join(repoRoot(), 'bench', 'results', 'failover.jsonl'));
  const env = stackEnv();
  const redis = createClient({ url: `redis://:${encodeURIComponent(env.REDIS_PASSWORD)}@${env.REDIS_ADDR}` });
  await redis.connect();
  let rig: Rig | undefined;
  try {
    const t = Date.now();
    rig = await startRig({ second: true, covens: Array.from({ length: souls }, () => ['web']), steps: 2 });
    const setupMs = Date.now() - t;
    const started = rig;
    const b = rig.b!;
    const kidA = rig.k.config.kid;
    const kidB = b.access.config.kid;
    const applyId = await rig.create('failover');
    await midDispatch(rig, applyId);
    const load = os.loadavg()[0];
    const t0 = Date.now();
    if (kill) {
      rig.keeper.child.kill('SIGKILL');
      await rig.keeper.exited;
      rig.k.baseUrl = b.access.baseUrl;
    }

    // The cache side, read directly: when A's claim went, when every lease named B.
    // And the lowest remaining lifetime of B's own claim while B takes the load: the margin a live
    // keeper keeps against being taken as dead (keeper/kid-claim.ts).
    let claimLapsed: number | null = null;
    let soulsOnB: number | null = null;
    let firstOnB: number | null = null;
    let bClaimMinTtl = Number.POSITIVE_INFINITY;
    let settled = false;
    const leaseKeys = rig.souls.map((s) => `keeper:presence:${s.sid}`);
    const watching = (async () => {
      while (!settled && Date.now() - t0 < 120_000) {
        bClaimMinTtl = Math.min(bClaimMinTtl, await redis.pTTL(`keeper:kid:${kidB}`));
        if (claimLapsed === null && (await redis.exists(`keeper:kid:${kidA}`)) === 0) claimLapsed = Date.now() - t0;
        if (soulsOnB === null) {
          const onB = (await redis.mGet(leaseKeys)).map(
            (l) => l !== null && (JSON.parse(l) as { kid: string }).kid === kidB,
          );
          if (firstOnB === null && onB.some(Boolean)) firstOnB = Date.now() - t0;
          if (onB.every(Boolean)) soulsOnB = Date.now() - t0;
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const status = await waitFor(
      'the run to settle',
      async () => {
        const r = await api(kill ? b.access : started.k, 'GET', '/v1/incarnations/failover');
        return r.status === 200 && r.body.status !== 'applying' ? (r.body.status as string) : undefined;
      },
      120_000,
      100,
    );
    const readySeen = Date.now() - t0;
    settled = true;
    await watching;

    const connection = await connectStackTemporal();
    let phases: Record<string, number | null> = {};
    try {
      const history = await new Client({ connection, namespace: 'default' }).workflow.getHandle(applyId).fetchHistory();
      const events = history.events ?? [];
      const at = (e: (typeof events)[number] | undefined) =>
        e ? Number(e.eventTime?.seconds ?? 0) * 1000 + Math.floor((e.eventTime?.nanos ?? 0) / 1e6) - t0 : null;
      const lost = events.find(
        (e) => e.activityTaskFailedEventAttributes?.failure?.applicationFailureInfo?.type === 'KeeperLost',
      );
      const timedOut = events.find((e) => e.activityTaskTimedOutEventAttributes);
      const after = (ms: number | null) => (e: (typeof events)[number]) => (at(e) ?? -1) > (ms ?? 0);
      // The routing after the KeeperLost: a local activity, recorded as a marker with its workflow task.
      const rerouted = events.find((e) => after(at(lost))(e) && e.markerRecordedEventAttributes);
      const onB = events.find(
        (e) => after(0)(e) && e.activityTaskStartedEventAttributes?.identity === `keeper-${kidB}-dispatch`,
      );
      const done = events.find((e) => e.workflowExecutionCompletedEventAttributes);
      // --trace: every event after the kill, to see where a gap is (event type and ms from the kill).
      if (process.argv.includes('--trace'))
        for (const e of events.filter(after(0)))
          console.log(
            `${at(e)} ${e.eventType} ${JSON.stringify(e.workflowTaskStartedEventAttributes?.identity ?? e.activityTaskStartedEventAttributes?.identity ?? '')}`,
          );
      phases = {
        keeper_lost_ms: at(lost),
        heartbeat_timeout_ms: at(timedOut),
        reroute_ms: at(rerouted),
        dispatch_on_b_ms: at(onB),
        ready_ms: at(done),
      };
    } finally {
      await connection.close();
    }
    const check = await rig.check();
    const result = {
      label,
      killed: kill,
      at: new Date(t0).toISOString(),
      souls,
      load_at_kill: Number(load.toFixed(1)),
      setup_ms: setupMs,
      status,
      claim_lapsed_ms: claimLapsed,
      first_soul_on_b_ms: firstOnB,
      souls_on_b_ms: soulsOnB,
      b_claim_min_ttl_ms: bClaimMinTtl,
      ...phases,
      ready_seen_ms: readySeen,
      committed_runs: check.runs.filter((r) => r.status === 'succeeded').length,
    };
    fs.mkdirSync(path.dirname(out), { recursive: true });
    fs.appendFileSync(out, `${JSON.stringify(result)}\n`);
    console.log(JSON.stringify(result, null, 2));
  } finally {
    await rig?.stop();
    await redis.quit();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
