// Each test suite gets its own PostgreSQL database (the stack's keeper role may create them), so
// suites never see each other's operators or souls.
import { randomBytes } from 'node:crypto';
import knexFactory from 'knex';
import { stackEnv } from './stack-env';

export interface TestDatabase {
  name: string;
  dsn: string;
  drop(): Promise<void>;
}

function dsnFor(db: string): string {
  const e = stackEnv();
  return `postgres://${e.PG_USER}:${e.PG_PASSWORD}@${e.PG_HOST}:${e.PG_PORT}/${db}`;
}

export async function createTestDatabase(prefix = 't'): Promise<TestDatabase> {
  const name = `keeper_${prefix}_${randomBytes(5).toString('hex')}`;
  const admin = knexFactory({ client: 'pg', connection: dsnFor('keeper'), pool: { min: 0, max: 1 } });
  try {
    await admin.raw(`create database ${name}`);
  } finally {
    await admin.destroy();
  }
  return {
    name,
    dsn: dsnFor(name),
    async drop() {
      const a = knexFactory({ client: 'pg', connection: dsnFor('keeper'), pool: { min: 0, max: 1 } });
      try {
        await dropDatabase(a, name);
      } finally {
        await a.destroy();
      }
    },
  };
}

/**
 * `with (force)` ends the suite's leftover connections, but it refuses when one of the backends is
 * not the keeper role's to end: on a fresh cluster an autovacuum worker busy in the new database
 * (seen once in a first-time rehearsal: "must be a member of the role whose process is being
 * terminated"). A plain DROP DATABASE tells autovacuum to leave, so that is tried then, a few times
 * while the worker exits ("being accessed by other users").
 */
async function dropDatabase(a: knexFactory.Knex, name: string): Promise<void> {
  try {
    await a.raw(`drop database if exists ${name} with (force)`);
    return;
  } catch (err) {
    if ((err as { code?: string }).code !== '42501') throw err;
  }
  for (let attempt = 1; ; attempt++) {
    try {
      await a.raw(`drop database if exists ${name}`);
      return;
    } catch (err) {
      if ((err as { code?: string }).code !== '55006' || attempt === 20) throw err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}
