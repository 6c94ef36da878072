// Applies the schema migrations at startup. knex's own lock table makes a second concurrent runner
// fail rather than wait, so every runner first takes a PostgreSQL advisory lock: instances starting
// together apply the migrations once, in order, and the others find nothing left to do.
import path from 'node:path';
import type { Knex } from 'knex';

const MIGRATION_LOCK = 0x6b656570; // "keep"

export async function migrateLatest(db: Knex): Promise<string[]> {
  const conn = await db.client.acquireConnection();
  try {
    await db.raw('select pg_advisory_lock(?)', [MIGRATION_LOCK]).connection(conn);
    const [, applied] = (await db.migrate.latest({
      directory: path.join(__dirname, 'migrations'),
      loadExtensions: ['.js'],
      tableName: 'knex_migrations',
    })) as [number, string[]];
    return applied;
  } finally {
    await db
      .raw('select pg_advisory_unlock(?)', [MIGRATION_LOCK])
      .connection(conn)
      .catch(() => undefined);
    await db.client.releaseConnection(conn);
  }
}
