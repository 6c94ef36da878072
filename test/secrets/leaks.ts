// Where a canary could hide, each read in full: a database dump, every cache key, every Temporal
// history of a run (children included), every file under a directory.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@temporalio/client';
import { createClient } from 'redis';
import { stackEnv } from '../support/stack-env';
import { connectStackTemporal } from '../support/temporal-client';

const run = promisify(execFile);

/** `pg_dump` of the whole database, data and schema. */
export async function pgDump(dsn: string): Promise<string> {
  const { stdout } = await run('pg_dump', ['--no-owner', dsn], { maxBuffer: 256 * 1024 * 1024 });
  if (!stdout.includes('PostgreSQL database dump')) throw new Error('pg_dump gave no dump');
  return stdout;
}

/** Every key of the cache with its value, whatever its type. */
export async function redisDump(): Promise<string> {
  const env = stackEnv();
  const [host, port] = env.REDIS_ADDR.replace(/^redis:\/\//, '').split(':');
  const c = createClient({ socket: { host, port: Number(port) }, password: env.REDIS_PASSWORD || undefined });
  await c.connect();
  const out: string[] = [];
  try {
    for await (const batch of c.scanIterator({ COUNT: 1000 })) {
      for (const key of ([] as string[]).concat(batch as string | string[])) {
        const type = await c.type(key);
        let v: unknown;
        if (type === 'string') v = await c.get(key);
        else if (type === 'hash') v = await c.hGetAll(key);
        else if (type === 'list') v = await c.lRange(key, 0, -1);
        else if (type === 'set') v = await c.sMembers(key);
        else if (type === 'zset') v = await c.zRange(key, 0, -1);
        else if (type === 'stream') v = await c.xRange(key, '-', '+');
        out.push(`${key} ${type} ${JSON.stringify(v)}`);
      }
    }
  } finally {
    await c.quit();
  }
  if (out.length === 0) throw new Error('the cache has no keys at all: scanned the wrong instance?');
  return out.join('\n');
}

/** The histories of a run's workflow and of every child it started, as JSON. */
export async function temporalHistories(applyId: string): Promise<{ count: number; json: string }> {
  const connection = await connectStackTemporal();
  try {
    const client = new Client({ connection, namespace: 'default' });
    const texts: string[] = [];
    const queue = [applyId];
    while (queue.length > 0) {
      const id = queue.shift()!;
      const history = await client.workflow.getHandle(id).fetchHistory();
      const json = JSON.stringify(history);
      texts.push(json);
      for (const e of history.events ?? []) {
        const child = e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId;
        if (child) queue.push(child);
      }
    }
    return { count: texts.length, json: texts.join('\n') };
  } finally {
    await connection.close();
  }
}

/** Every regular file under `dir` (recursively) with its text. */
export function filesUnder(dir: string): Array<{ file: string; text: string }> {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name))
    .map((file) => ({ file, text: fs.readFileSync(file).toString('latin1') }));
}
