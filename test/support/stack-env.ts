// The running local stack as `scripts/stack.sh up` described it in .stack/env.
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot } from './repo';

export interface StackEnv {
  STACK_DIR: string;
  PG_HOST: string; PG_PORT: string; PG_USER: string; PG_PASSWORD: string;
  REDIS_ADDR: string; REDIS_PASSWORD: string;
  SECRETSTORE_ADDR: string; SECRETSTORE_ROOT_TOKEN: string;
  TEMPORAL_ADDRESS: string; TEMPORAL_UI: string;
}

let cached: StackEnv | undefined;

export function stackEnv(): StackEnv {
  if (cached) return cached;
  const dir = process.env.KEEPER_STACK_DIR ?? path.join(repoRoot(), '.stack');
  const file = path.join(dir, 'env');
  if (!fs.existsSync(file)) throw new Error(`${file} is missing: the integration tests need the local stack; run \`make stack\``);
  const env = Object.fromEntries(fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => {
    const i = l.indexOf('=');
    return [l.slice(0, i), l.slice(i + 1)];
  }));
  cached = env as unknown as StackEnv;
  return cached;
}

export function stackFile(...parts: string[]): string {
  return path.join(stackEnv().STACK_DIR, ...parts);
}
