// The soul's durable ledger of applied steps: (apply_id, step index) -> recorded result. The
// keeper may deliver a step more than once (retries, a reconnect, a keeper failover); the soul
// answers a redelivery from here instead of acting again. That is how effects stay exactly-once
// (ARCHITECTURE.md section 2). One ledger belongs to one soul, i.e. one host; each record also
// names the host so a misrouted step can be told apart.
//
// Format: <dir>/<apply_id>.jsonl, one JSON object per line (see docs/state-modules.md). A line is
// fsynced before record() resolves, so a result is durable before it is reported. The first record
// of an index wins; later ones for the same index are not written.
//
// Memory: the disk is the ledger; memory holds only the applies used last (an LRU of at most
// `cacheApplies` applies and `cacheBytes` bytes of journal lines). A redelivery almost always asks
// for a step of a run in flight, which is cached; a redelivered step of an older apply is read from
// its journal on demand. Without the bound a soul held every step of `retention_days` (30 by
// default) in memory, with its output and diff: hundreds of MB on a busy host (issue 36).
// Cache misses read the journal in the apply's write queue, so a read never misses a record whose
// append finished before it, and an eviction can never hide a recorded step (exactly-once holds).
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
  /** Applies whose records are kept in memory (least recently used evicted first); default 64. */
  cacheApplies?: number;
  /** Bytes of journal lines kept in memory; default 4 MiB. The apply used last is kept even if larger. */
  cacheBytes?: number;
}

export const DEFAULT_CACHE_APPLIES = 64;
export const DEFAULT_CACHE_BYTES = 4 * 1024 * 1024;

interface Cached {
  records: Map<number, LedgerRecord>;
  bytes: number;
}

const SUFFIX = '.jsonl';
const DAY_MS = 86_400_000;

function isRecord(v: unknown): v is LedgerRecord {
  const r = v as Partial<LedgerRecord> | null;
  return (
    typeof r === 'object' &&
    r !== null &&
    typeof r.apply_id === 'string' &&
    Number.isSafeInteger(r.index) &&
    typeof r.host === 'string' &&
    typeof r.changed === 'boolean' &&
    typeof r.ok === 'boolean' &&
    typeof r.output === 'string' &&
    typeof r.started_at === 'string' &&
    typeof r.finished_at === 'string'
  );
}

export class Ledger {
  /** apply id -> its records; Map order is recency (a hit is moved to the end). */
  private readonly cache = new Map<string, Cached>();
  private cachedBytes = 0;
  // Appends to one journal are serialised so the torn-line repair and first-wins check see a
  // consistent file. Different apply ids proceed in parallel.
  private readonly queues = new Map<string, Promise<unknown>>();
  private closed = false;

  private constructor(
    readonly dir: string,
    private readonly lock: DirLock,
    private readonly opts: LedgerOptions,
  ) {}

  /** Opens (creating with mode 0700) the ledger directory and takes its lock; see dir-lock.ts. */
  static async open(dir: string, opts: LedgerOptions = {}): Promise<Ledger> {
    const abs = path.resolve(dir);
    await fs.mkdir(abs, { recursive: true, mode: 0o700 });
    return new Ledger(abs, await acquireDirLock(abs), opts);
  }

  async get(applyId: string, index: number): Promise<LedgerRecord | undefined> {
    assertStepIndex(index);
    return (await this.load(applyId)).records.get(index);
  }

  /** Records a step's result durably; returns the stored record (the earlier one if it existed). */
  async record(applyId: string, index: number, entry: LedgerEntry): Promise<LedgerRecord> {
    assertApplyId(applyId);
    assertStepIndex(index);
    return this.serial(applyId, async () => {
      const c = this.hit(applyId) ?? (await this.read(applyId));
      const existing = c.records.get(index);
      if (existing) return existing;
      const rec: LedgerRecord = { apply_id: applyId, index, ...entry };
      const bytes = await appendJournal(this.file(applyId), rec);
      c.records.set(index, rec);
      // Evicted while the line was written: the journal has it and the next miss reads it.
      if (this.cache.get(applyId) === c) {
        c.bytes += bytes;
        this.cachedBytes += bytes;
        this.evict();
      }
      return rec;
    });
  }

  /** All recorded steps of an apply, by index. */
  async list(applyId: string): Promise<LedgerRecord[]> {
    return [...(await this.load(applyId)).records.values()].sort((a, b) => a.index - b.index);
  }

  /** What the memory holds now (for tests and metrics): applies cached and their journal bytes. */
  cacheUsage(): { applies: number; bytes: number } {
    return { applies: this.cache.size, bytes: this.cachedBytes };
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
        this.drop(applyId);
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

  private async load(applyId: string): Promise<Cached> {
    this.assertOpen();
    assertApplyId(applyId);
    // A miss reads in the apply's write queue: after every append queued before it has finished.
    return this.hit(applyId) ?? this.serial(applyId, async () => this.hit(applyId) ?? this.read(applyId));
  }

  /** The cached records of an apply, marked as used last. */
  private hit(applyId: string): Cached | undefined {
    const c = this.cache.get(applyId);
    if (c) {
      this.cache.delete(applyId);
      this.cache.set(applyId, c);
    }
    return c;
  }

  /** Reads a journal into the cache; call only in the apply's queue (serial). */
  private async read(applyId: string): Promise<Cached> {
    const { entries, skipped, bytes } = await readJournal(this.file(applyId), isRecord);
    if (skipped > 0)
      this.opts.warn?.(
        `ledger ${this.file(applyId)}: skipped ${skipped} unreadable line(s), e.g. a write torn by a crash`,
      );
    const records = new Map<number, LedgerRecord>();
    for (const e of entries) if (e.apply_id === applyId && !records.has(e.index)) records.set(e.index, e);
    const c: Cached = { records, bytes };
    this.cache.set(applyId, c);
    this.cachedBytes += bytes;
    this.evict();
    return c;
  }

  private drop(applyId: string): void {
    const c = this.cache.get(applyId);
    if (!c) return;
    this.cache.delete(applyId);
    this.cachedBytes -= c.bytes;
  }

  /** Drops the least recently used applies until both bounds hold; the newest stays regardless. */
  private evict(): void {
    const maxApplies = Math.max(1, this.opts.cacheApplies ?? DEFAULT_CACHE_APPLIES);
    const maxBytes = this.opts.cacheBytes ?? DEFAULT_CACHE_BYTES;
    for (const applyId of this.cache.keys()) {
      if (this.cache.size <= 1 || (this.cache.size <= maxApplies && this.cachedBytes <= maxBytes)) break;
      this.drop(applyId);
    }
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
