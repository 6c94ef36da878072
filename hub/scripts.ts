// Runs a Lua script on the cache by its SHA, loading it on first use and again after a cache restart
// (NOSCRIPT), so a fenced read-modify-write is one atomic round trip.
import { createHash } from 'node:crypto';
import type { Cache } from '../platform/cache';

export interface Script {
  source: string;
  sha: string;
}

export function defineScript(source: string): Script {
  return { source, sha: createHash('sha1').update(source).digest('hex') };
}

export async function runScript(
  cache: Cache,
  script: Script,
  keys: string[],
  args: (string | number)[],
): Promise<unknown> {
  const options = { keys, arguments: args.map(String) };
  try {
    return await cache.evalSha(script.sha, options);
  } catch (err) {
    if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
    return cache.eval(script.source, options);
  }
}
