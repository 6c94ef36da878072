// The running local stack as `scripts/stack.sh up` described it in .stack/env.
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot } from './repo';

export interface StackEnv {
  STACK_DIR: string;
  PG_HOST: string;
  PG_PORT: string;
  PG_USER: string;
  PG_PASSWORD: string;
  REDIS_ADDR: string;
  REDIS_PASSWORD: string;
  SECRETSTORE_ADDR: string;
  SECRETSTORE_ROOT_TOKEN: string;
  TEMPORAL_ADDRESS: string;
  TEMPORAL_UI: string;
  /** Present when the stack runs Temporal behind mutual TLS (KEEPER_TEMPORAL_MTLS=1 in scripts/stack.sh). */
  TEMPORAL_TLS_CA?: string;
  TEMPORAL_TLS_CERT?: string;
  TEMPORAL_TLS_KEY?: string;
  TEMPORAL_TLS_SERVER_NAME?: string;
}

let cached: StackEnv | undefined;

export function stackEnv(): StackEnv {
  if (cached) return cached;
  const dir = process.env.KEEPER_STACK_DIR ?? path.join(repoRoot(), '.stack');
  const file = path.join(dir, 'env');
  if (!fs.existsSync(file))
    throw new Error(`${file} is missing: the integration tests need the local stack; run \`make stack\``);
  const env = Object.fromEntries(
    fs
      .readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => {
        const i = l.indexOf('=');
        return [l.slice(0, i), l.slice(i + 1)];
      }),
  );
  cached = env as unknown as StackEnv;
  return cached;
}

export function stackFile(...parts: string[]): string {
  return path.join(stackEnv().STACK_DIR, ...parts);
}

/** The keeper's temporal.tls block for the stack's Temporal, or undefined when it runs without TLS. */
export function stackTemporalTlsConfig(): { ca: string; cert: string; key: string; server_name: string } | undefined {
  const e = stackEnv();
  if (!e.TEMPORAL_TLS_CA || !e.TEMPORAL_TLS_CERT || !e.TEMPORAL_TLS_KEY) return undefined;
  return {
    ca: e.TEMPORAL_TLS_CA,
    cert: e.TEMPORAL_TLS_CERT,
    key: e.TEMPORAL_TLS_KEY,
    server_name: e.TEMPORAL_TLS_SERVER_NAME ?? '',
  };
}
