// One timed run of the fleet benchmark: POST -> the incarnation `ready` in PostgreSQL (polled every
// 10 ms, so waiting adds no keeper work) and the CPU seconds it cost, or the report of a run that failed.
import { api } from '../../test/agents/harness';
import { cpuNow, type Rig } from './rig';

/** A run that did not end `ready`: what the report says, short enough for the results file. */
export class RunFailed extends Error {
  constructor(
    readonly summary: {
      run: string;
      apply_id: string;
      status: string;
      error: string | null;
      hosts_by_status: Record<string, number>;
      reasons: Record<string, number>;
    },
  ) {
    super(
      `${summary.run} (${summary.apply_id}) ended ${summary.status}: ${summary.error ?? ''} ${JSON.stringify(summary.reasons)}`,
    );
  }
}

export interface Timed {
  apply_id: string;
  postedAt: number;
  observedAt: number;
  post_to_ready_ms: number;
  post_answered_ms: number;
  cpu: Record<string, number>;
}

export async function timedRun(
  rig: Rig,
  name: string,
  what: string,
  start: () => Promise<{ status: number; body: any }>,
): Promise<Timed> {
  const c0 = cpuNow(rig);
  const postedAt = Date.now();
  const t0 = performance.now();
  const r = await start();
  const answered = performance.now() - t0;
  if (r.status !== 202) throw new Error(`run of ${name} not accepted: ${r.status} ${JSON.stringify(r.body)}`);
  const status = await rig.db.settled(name, 600_000, 10);
  const elapsed = performance.now() - t0;
  const observedAt = Date.now();
  const c1 = cpuNow(rig);
  if (status !== 'ready') {
    const rep = (await api(rig.k, 'GET', `/v1/incarnations/${name}/runs/${r.body.apply_id}`)).body as {
      error: string | null;
      hosts: { status: string; reason: string | null }[];
    };
    const hosts: Record<string, number> = {};
    const reasons: Record<string, number> = {};
    for (const h of rep.hosts) {
      hosts[h.status] = (hosts[h.status] ?? 0) + 1;
      // The SID and request id make every reason unique; the rest says what happened.
      if (h.reason) {
        const k = h.reason.replace(/\S+\.keeper\.test/g, '<sid>').replace(/[0-9a-f-]{36}/g, '<id>');
        reasons[k] = (reasons[k] ?? 0) + 1;
      }
    }
    throw new RunFailed({
      run: what,
      apply_id: r.body.apply_id,
      status,
      error: rep.error,
      hosts_by_status: hosts,
      reasons,
    });
  }
  const cpu = Object.fromEntries(Object.keys(c0).map((k) => [k, c1[k as keyof typeof c1] - c0[k as keyof typeof c0]]));
  return {
    apply_id: r.body.apply_id as string,
    postedAt,
    observedAt,
    post_to_ready_ms: elapsed,
    post_answered_ms: answered,
    cpu,
  };
}
