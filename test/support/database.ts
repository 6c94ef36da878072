// Each test suite gets its own PostgreSQL database (the stack's keeper role may create them), so
// suites never see each other's operators or souls.
import { randomBytes } from 'node:crypto';
import knexFactory from 'knex';
import { stackEnv } from './stack-env';

export interface TestDatabase { name: string; dsn: string; drop(): Promise<void> }

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
    name, dsn: dsnFor(name),
    async drop() {
      const a = knexFactory({ client: 'pg', connection: dsnFor('keeper'), pool: { min: 0, max: 1 } });
      try {
        await a.raw(`drop database if exists ${name} with (force)`);
      } finally {
        await a.destroy();
      }
    },
  };
}
