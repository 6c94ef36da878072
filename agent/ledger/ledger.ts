// The soul's durable ledger of applied steps: (apply_id, step index) -> recorded result. The
// keeper may deliver a step more than once (retries, a reconnect, a keeper failover); the soul
// answers a redelivery from here instead of acting again. That is how effects stay exactly-once
// (ARCHITECTURE.md section 2). One ledger belongs to one soul, i.e. one host; each record also
// names the host so a misrouted step can be told apart.
//
// Format: <dir>/<apply_id>.jsonl, one JSON object per line (see docs/state-modules.md). A line is
// fsynced before record() resolves, so a result is durable before it is reported. The first record
// of an index wins; later ones for the same index are not written.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { acquireDirLock, type DirLock } from './dir-lock';
import { appendJournal, readJournal } from './journal';
import { assertApplyId, assertStepIndex } from './keys';

/** What the applier records for a step. */
export interface LedgerEntry {
  host: string;
  module?: string;
  changed: boolean;
  ok: boolean;
  output: string;
  diff?: Record<string, unknown>;
  started_at: string;
  finished_at: string;
}

export interface LedgerRecord extends LedgerEntry {
  apply_id: string;
  index: number;
}

export interface LedgerOptions {
  /** Clock for pruning; tests pass a fixed one. */
  now?: () => Date;
  /** Told about skipped (torn or corrupt) lines when a journal is loaded. */
  warn?: (message: string) => void;
}

const SUFFIX = '.jsonl';
const DAY_MS = 86_400_000;

function isRecord(v: unknown): v is LedgerRecord {
  const r = v as Partial<LedgerRecord> | null;
  return typeof r === 'object' && r !== null && typeof r.apply_id === 'string' && Number.isSafeInteger(r.index) &&
    typeof r.host === 'string' && typeof r.changed === 'boolean' && typeof r.ok === 'boolean' &&
    typeof r.output === 'string' && typeof r.started_at === 'string' && typeof r.finished_at === 'string';
}

export class Ledger {
  private readonly cache = new Map<string, Map<number, LedgerRecord>>();
  // Appends to one journal are serialised so the torn-line repair and first-wins check see a
  // consistent file. Different apply ids proceed in parallel.
  private readonly queues = new Map<string, Promise<unknown>>();
  private closed = false;

  private constructor(readonly dir: string, private readonly lock: DirLock, private readonly opts: LedgerOptions) {}

  /** Opens (creating with mode 0700) the ledger directory and takes its lock; see dir-lock.ts. */
  static async open(dir: string, opts: LedgerOptions = {}): Promise<Ledger> {
    const abs = path.resolve(dir);
    await fs.mkdir(abs, { recursive: true, mode: 0o700 });
    return new Ledger(abs, await acquireDirLock(abs), opts);
  }

  async get(applyId: string, index: number): Promise<LedgerRecord | undefined> {
    assertStepIndex(index);
    return (await this.load(applyId)).get(index);
  }

  /** Records a step's result durably; returns the stored record (the earlier one if it existed). */
  async record(applyId: string, index: number, entry: LedgerEntry): Promise<LedgerRecord> {
    assertApplyId(applyId);
    assertStepIndex(index);
    return this.serial(applyId, async () => {
      const records = await this.load(applyId);
      const existing = records.get(index);
      if (existing) return existing;
      const rec: LedgerRecord = { apply_id: applyId, index, ...entry };
      await appendJournal(this.file(applyId), rec);
      records.set(index, rec);
      return rec;
    });
  }

  /** All recorded steps of an apply, by index. */
  async list(applyId: string): Promise<LedgerRecord[]> {
    return [...(await this.load(applyId)).values()].sort((a, b) => a.index - b.index);
  }

  /**
   * Deletes journals not written to for more than `days` days; returns their apply ids. A pruned
   * step that is delivered again would be applied again (states are idempotent, so this is safe but
   * not exactly-once): keep `days` well beyond how long the keeper may retry a run.
   */
  async prune(days: number): Promise<string[]> {
    if (!(days >= 0)) throw new RangeError(`prune age must be a number of days >= 0, got ${days}`);
    this.assertOpen();
    const cutoff = (this.opts.now?.() ?? new Date()).getTime() - days * DAY_MS;
    const removed: string[] = [];
    for (const name of await fs.readdir(this.dir)) {
      if (!name.endsWith(SUFFIX)) continue;
      const applyId = name.slice(0, -SUFFIX.length);
      const st = await fs.stat(path.join(this.dir, name)).catch(() => null);
      if (st === null || st.mtimeMs >= cutoff) continue;
      await this.serial(applyId, async () => {
        await fs.unlink(path.join(this.dir, name)).catch(() => undefined);
        this.cache.delete(applyId);
      });
      removed.push(applyId);
    }
    return removed.sort();
  }

  /** Releases the directory lock; the ledger cannot be used afterwards. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.allSettled([...this.queues.values()]);
    await this.lock.release();
  }

  private file(applyId: string): string {
    return path.join(this.dir, applyId + SUFFIX);
  }

  private assertOpen(): void {
    if (this.closed) throw new Error(`ledger ${this.dir} is closed`);
  }

  private async load(applyId: string): Promise<Map<number, LedgerRecord>> {
    this.assertOpen();
    assertApplyId(applyId);
    const cached = this.cache.get(applyId);
    if (cached) return cached;
    const { entries, skipped } = await readJournal(this.file(applyId), isRecord);
    if (skipped > 0) this.opts.warn?.(`ledger ${this.file(applyId)}: skipped ${skipped} unreadable line(s), e.g. a write torn by a crash`);
    // Two concurrent loads both read; the first to finish is kept so no caller holds a stale map.
    const again = this.cache.get(applyId);
    if (again) return again;
    const records = new Map<number, LedgerRecord>();
    for (const e of entries) if (e.apply_id === applyId && !records.has(e.index)) records.set(e.index, e);
    this.cache.set(applyId, records);
    return records;
  }

  private serial<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.queues.get(key) ?? Promise.resolve();
    const next = prev.then(fn, fn);
    const settled = next.catch(() => undefined);
    this.queues.set(key, settled);
    void settled.then(() => {
      if (this.queues.get(key) === settled) this.queues.delete(key);
    });
    return next;
  }
}
