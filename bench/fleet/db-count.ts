// The keeper's database work as PostgreSQL counts it, and the benchmark's own window on it.
//
// pg_stat_statements is not loaded in the stack (and the keeper role may not create it), so what is
// counted is transactions: pg_stat_database's xact_commit + xact_rollback of the keeper's own
// database (every keeper here has a database of its own, test/support/database.ts), and rows written
// (tup_inserted + tup_updated + tup_deleted). An autocommit statement is one transaction, a knex
// transaction of several statements is one too: transactions are a lower bound on statements.
//
// PostgreSQL 15 backends report these counters when they go idle, but at most once a second, and an
// idle backend holding counts flushes them only after 10 s (PGSTAT_IDLE_INTERVAL; measured: 50
// queries showed up 10.06 s later). So every snapshot is taken after FLUSH_MS of quiet, and the
// benchmark's own queries on the keeper's database (waiting for runs to end, reading these counters)
// are counted here and taken off.
import { Client } from 'pg';

/** Longer than PGSTAT_IDLE_INTERVAL (10 s): every backend has reported what it did before. */
export const FLUSH_MS = 11_000;

export interface DbSnapshot {
  at: number;
  transactions: number;
  rowsWritten: number;
  own: number;
}

export interface DbDelta {
  /** Transactions of the window, less the benchmark's own and less the idle rate over its length. */
  transactions: number;
  rowsWritten: number;
  seconds: number;
}

export class DbCounter {
  /** Queries this client sent on the keeper's database (each an autocommit transaction). */
  private own = 0;

  private constructor(private readonly client: Client) {}

  static async open(dsn: string): Promise<DbCounter> {
    const client = new Client({ connectionString: dsn });
    await client.connect();
    return new DbCounter(client);
  }

  async close(): Promise<void> {
    await this.client.end().catch(() => undefined);
  }

  private async query<T extends Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<T[]> {
    this.own++;
    return (await this.client.query(sql, params)).rows as T[];
  }

  /** The counters now; the caller has let FLUSH_MS of quiet pass first. */
  async snapshot(): Promise<DbSnapshot> {
    // `own` before this query: the query itself lands in the next window, where it is taken off.
    const own = this.own;
    const [r] = await this.query<{ x: string; w: string }>(
      `select xact_commit + xact_rollback as x, tup_inserted + tup_updated + tup_deleted as w
         from pg_stat_database where datname = current_database()`,
    );
    return { at: Date.now(), transactions: Number(r!.x), rowsWritten: Number(r!.w), own };
  }

  /**
   * Waits until the incarnation leaves `applying`, looking every `everyMs` straight in PostgreSQL
   * (where the API reads it too): no API request, so no keeper CPU and no keeper query is added to
   * what is measured, and the poll's own transactions are known exactly.
   */
  async settled(incarnation: string, timeoutMs: number, everyMs = 5): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const [r] = await this.query<{ status: string }>('select status from incarnations where name = $1', [
        incarnation,
      ]);
      if (r && r.status !== 'applying') return r.status;
      if (Date.now() > deadline) throw new Error(`${incarnation} still applying after ${timeoutMs} ms`);
      await new Promise((res) => setTimeout(res, everyMs));
    }
  }
}

/** What the keeper did between two snapshots: the benchmark's queries and the idle rate taken off. */
export function delta(
  a: DbSnapshot,
  b: DbSnapshot,
  idle: { transactionsPerSecond: number; rowsPerSecond: number },
): DbDelta {
  const seconds = (b.at - a.at) / 1000;
  return {
    transactions: b.transactions - a.transactions - (b.own - a.own) - idle.transactionsPerSecond * seconds,
    rowsWritten: b.rowsWritten - a.rowsWritten - idle.rowsPerSecond * seconds,
    seconds,
  };
}

/** The keeper's background rate (reaper, converge loop, presence snapshots) over an idle window. */
export function idleRate(a: DbSnapshot, b: DbSnapshot): { transactionsPerSecond: number; rowsPerSecond: number } {
  const d = delta(a, b, { transactionsPerSecond: 0, rowsPerSecond: 0 });
  return { transactionsPerSecond: d.transactions / d.seconds, rowsPerSecond: d.rowsWritten / d.seconds };
}
