// Keyset paging, written once for every list of db/repos: the query each kind of page makes (built
// by knex without a connection) and how a page is cut from the one row more it asks for.
import assert from 'node:assert/strict';
import knex from 'knex';
import { fetchNewestFirst, fetchPage, takePage } from './page';

const db = knex({ client: 'pg' });
type Row = { k: string };

/** Runs the page function against a query that records its SQL and answers `rows`. */
function recording(rows: Row[]) {
  const q = db('t').where({ scope: 's' });
  let sql: { sql: string; bindings: readonly unknown[] } | undefined;
  (q as unknown as { then: unknown }).then = (resolve: (v: Row[]) => unknown) => {
    sql = q.toSQL().toNative();
    return Promise.resolve(resolve(rows));
  };
  return { q, sql: () => sql! };
}

describe('db/repos page', () => {
  after(() => db.destroy());

  it('cuts a page from one row more than asked: next is the last key returned, only when more follow', () => {
    const rows = [{ k: 'a' }, { k: 'b' }, { k: 'c' }];
    assert.deepEqual(
      takePage(rows, 2, (r) => r.k),
      { items: [{ k: 'a' }, { k: 'b' }], next: 'b' },
    );
    assert.deepEqual(
      takePage(rows, 3, (r) => r.k),
      { items: rows },
    );
    assert.deepEqual(
      takePage([], 3, (r: Row) => r.k),
      { items: [] },
    );
  });

  it('pages oldest first after the cursor, converting the cursor to the key type', async () => {
    const r = recording([{ k: '5' }, { k: '6' }, { k: '7' }]);
    const page = await fetchPage<Row>(r.q, 'id', { limit: 2, after: '4' }, (x) => x.k, Number);
    assert.deepEqual(page, { items: [{ k: '5' }, { k: '6' }], next: '6' });
    assert.equal(r.sql().sql, 'select * from "t" where "scope" = $1 and "id" > $2 order by "id" asc limit $3');
    assert.deepEqual(r.sql().bindings, ['s', 4, 3]);
  });

  it('pages newest first on (created_at, key), the cursor row looked up within the scope', async () => {
    const r = recording([{ k: 'r9' }]);
    const page = await fetchNewestFirst<Row>(
      db,
      r.q,
      'incarnation_runs',
      'apply_id',
      { incarnation: 'shop' },
      { limit: 2, after: 'r10' },
      (x) => x.k,
    );
    assert.deepEqual(page, { items: [{ k: 'r9' }] });
    assert.equal(
      r.sql().sql,
      'select * from "t" where "scope" = $1 and (created_at, "apply_id") < (select "created_at", "apply_id" from "incarnation_runs"' +
        ' where "incarnation" = $2 and "apply_id" = $3) order by "created_at" desc, "apply_id" desc limit $4',
    );
    assert.deepEqual(r.sql().bindings, ['s', 'shop', 'r10', 3]);
  });

  it('asks for the first page without a cursor condition', async () => {
    const r = recording([]);
    await fetchNewestFirst<Row>(
      db,
      r.q,
      'incarnation_runs',
      'apply_id',
      { incarnation: 'shop' },
      { limit: 5 },
      (x) => x.k,
    );
    assert.doesNotMatch(r.sql().sql, /created_at, "apply_id"\) </);
  });
});
