// The dispatch activity's pool and its progress (runs/activities/dispatch.ts): hosts are worked by a
// bounded number of workers, and what finished is written as the dispatch goes, so the run report
// shows a long dispatch progressing instead of every host `pending` until the end.
import type { HostRow, StepRow } from '../../db/repos/runs';

export type DispatchHostRow = Omit<HostRow, 'apply_id'>;

/**
 * Runs `work` over every item with at most `concurrency` at once, in order of the list; stops taking
 * new items once `signal` is aborted (the hosts not reached were never sent anything).
 */
export async function runPool<T>(
  items: readonly T[],
  concurrency: number,
  signal: AbortSignal,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length && !signal.aborted) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}

/**
 * The rows a dispatch has finished and not written yet. Writes are chained (never two at once); a
 * failed write is kept and thrown by `close`, which fails the activity, whose retry rewrites every host.
 */
export class DispatchReport {
  private hosts: DispatchHostRow[] = [];
  private steps: StepRow[] = [];
  private writing: Promise<void> = Promise.resolve();
  private writeError: unknown;
  /** Hosts finished (the heartbeat's progress). */
  done = 0;

  constructor(
    private readonly writeRows: (hosts: DispatchHostRow[], steps: StepRow[]) => Promise<void>,
    private readonly heartbeat: (progress: { done: number; of: number }) => void,
    private readonly of: number,
    /** Steps kept before a write is due whatever the heartbeat (bounds the memory of a large dispatch). */
    private readonly maxSteps = 500,
  ) {}

  /** A host's row and its steps; `finished` counts it as done (a host handed back as moved is not recorded). */
  add(host: DispatchHostRow, steps: StepRow[] = [], finished = true): void {
    this.steps.push(...steps);
    this.hosts.push(host);
    if (finished) this.done++;
  }

  /** Whether enough steps wait that the worker should write before taking the next host. */
  get full(): boolean {
    return this.steps.length >= this.maxSteps;
  }

  /** One heartbeat: the progress to Temporal, and the finished hosts to the database. */
  tick(): void {
    this.heartbeat({ done: this.done, of: this.of });
    if (this.hosts.length > 0) void this.write();
  }

  write(): Promise<void> {
    this.writing = this.writing
      .then(() => {
        const [h, s] = [this.hosts, this.steps];
        this.hosts = [];
        this.steps = [];
        return this.writeRows(h, s);
      })
      .catch((err: unknown) => {
        this.writeError ??= err;
      });
    return this.writing;
  }

  /** Writes what is left; throws the first write that failed. */
  async close(): Promise<void> {
    await this.write();
    if (this.writeError) throw this.writeError;
  }
}
