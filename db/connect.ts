// One knex instance per process, from the DSN resolved out of the secrets store.
import knexFactory, { type Knex } from 'knex';

export function connectDb(dsn: string, opts: { poolMax?: number; applicationName?: string } = {}): Knex {
  return knexFactory({
    client: 'pg',
    connection: { connectionString: dsn, application_name: opts.applicationName ?? 'keeper' },
    pool: { min: 0, max: opts.poolMax ?? 20 },
    acquireConnectionTimeout: 10_000,
  });
}

/** True when the database answers a trivial query within `timeoutMs`. */
export async function dbAnswers(db: Knex, timeoutMs = 1000): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      db.raw('select 1'),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('timeout')), timeoutMs);
      }),
    ]);
    return true;
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}
