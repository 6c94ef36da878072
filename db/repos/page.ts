// Keyset pagination shared by the list functions: rows are ordered by their primary key, a page asks
// for one row more than it returns, and `next` is the last key returned when more rows follow.
// Keyset (not offset) pages stay fast at any depth and never skip rows inserted meanwhile.
// Keys are names, compared in natural order (host2 before host10: the keeper_natural collation,
// migration 20261127600000), in both the ORDER BY and the keyset comparison so paging stays exact.
import type { Knex } from 'knex';

export interface PageRequest { limit: number; after?: string }
export interface Page<T> { items: T[]; next?: string }

export async function fetchPage<T>(query: Knex.QueryBuilder, key: string, req: PageRequest, keyOf: (row: T) => string): Promise<Page<T>> {
  if (req.after !== undefined) query.whereRaw('?? collate keeper_natural > ?', [key, req.after]);
  const rows = (await query.orderByRaw('?? collate keeper_natural asc', [key]).limit(req.limit + 1)) as T[];
  if (rows.length <= req.limit) return { items: rows };
  const items = rows.slice(0, req.limit);
  return { items, next: keyOf(items[items.length - 1]) };
}

/** Runs `fn` in the caller's transaction when there is one, else in a new one. */
export function inTransaction<T>(db: Knex | Knex.Transaction, fn: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  if ((db as Knex.Transaction).isTransaction) return fn(db as Knex.Transaction);
  return db.transaction(fn);
}

/** fetchPage newest first: `next` is the smallest key returned, the next page holds smaller ones. */
export async function fetchPageDesc<T>(query: Knex.QueryBuilder, key: string, req: PageRequest, keyOf: (row: T) => string): Promise<Page<T>> {
  if (req.after !== undefined) query.where(key, '<', req.after);
  const rows = (await query.orderBy(key, 'desc').limit(req.limit + 1)) as T[];
  if (rows.length <= req.limit) return { items: rows };
  const items = rows.slice(0, req.limit);
  return { items, next: keyOf(items[items.length - 1]) };
}
