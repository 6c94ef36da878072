// Keyset pagination shared by the list functions: rows are ordered by their primary key, a page asks
// for one row more than it returns, and `next` is the last key returned when more rows follow.
// Keyset (not offset) pages stay fast at any depth and never skip rows inserted meanwhile.
// Keys are names, compared in natural order (host2 before host10: the keeper_natural collation,
// migration 20261127600000), in both the ORDER BY and the keyset comparison so paging stays exact.
import type { Knex } from 'knex';

export interface PageRequest {
  limit: number;
  after?: string;
}
export interface Page<T> {
  items: T[];
  next?: string;
}

/**
 * Oldest first by one unique key. `keyOfAfter` turns the cursor into the key's type (a bigserial
 * compares as a number); without it the key is text and sorts naturally.
 */
export async function fetchPage<T>(
  query: Knex.QueryBuilder,
  key: string,
  req: PageRequest,
  keyOf: (row: T) => string,
  keyOfAfter?: (after: string) => unknown,
): Promise<Page<T>> {
  if (keyOfAfter) {
    if (req.after !== undefined) query.where(key, '>', keyOfAfter(req.after) as string);
    query.orderBy(key, 'asc');
  } else {
    // A text key (a name) sorts naturally, host2 before host10, by the keeper_natural collation
    // (docs/ui.md); the cursor compares under the same collation, so paging stays consistent.
    if (req.after !== undefined) query.whereRaw('?? collate keeper_natural > ?', [key, req.after]);
    query.orderByRaw('?? collate keeper_natural asc', [key]);
  }
  return takePage((await query.limit(req.limit + 1)) as T[], req.limit, keyOf);
}

/**
 * Newest first on (created_at, key): two rows may share a timestamp, the key breaks the tie. The
 * cursor is the key of the last row returned; its position is read from `table` within `scope`, so a
 * cursor of another scope (another incarnation's run) starts nothing.
 */
export async function fetchNewestFirst<T>(
  db: Knex,
  query: Knex.QueryBuilder,
  table: string,
  key: string,
  scope: Record<string, unknown>,
  req: PageRequest,
  keyOf: (row: T) => string,
): Promise<Page<T>> {
  if (req.after !== undefined)
    query.whereRaw('(created_at, ??) < ?', [
      key,
      db(table)
        .select('created_at', key)
        .where({ ...scope, [key]: req.after }),
    ]);
  const rows = (await query
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: key, order: 'desc' },
    ])
    .limit(req.limit + 1)) as T[];
  return takePage(rows, req.limit, keyOf);
}

/** A page from the rows of a query that asked for one more than `limit`: `next` only when more follow. */
export function takePage<T>(rows: T[], limit: number, keyOf: (row: T) => string): Page<T> {
  if (rows.length <= limit) return { items: rows };
  const items = rows.slice(0, limit);
  return { items, next: keyOf(items[items.length - 1]!) };
}

/** Runs `fn` in the caller's transaction when there is one, else in a new one. */
export function inTransaction<T>(db: Knex | Knex.Transaction, fn: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  if ((db as Knex.Transaction).isTransaction) return fn(db as Knex.Transaction);
  return db.transaction(fn);
}

/** fetchPage newest first: `next` is the smallest key returned, the next page holds smaller ones. */
export async function fetchPageDesc<T>(
  query: Knex.QueryBuilder,
  key: string,
  req: PageRequest,
  keyOf: (row: T) => string,
): Promise<Page<T>> {
  if (req.after !== undefined) query.where(key, '<', req.after);
  return takePage((await query.orderBy(key, 'desc').limit(req.limit + 1)) as T[], req.limit, keyOf);
}
