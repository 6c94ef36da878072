// The Redis connection. Commands fail fast while Redis is away (no offline queue), so /readyz and the
// presence code see the outage at once; the client reconnects by itself when Redis returns.
import { createClient } from 'redis';
import type { Logger } from '../common/logger';

function build(host: string, port: number, password: string | undefined) {
  return createClient({
    socket: {
      host,
      port,
      connectTimeout: 2000,
      reconnectStrategy: (retries: number) => Math.min(100 * 2 ** retries, 2000),
    },
    ...(password ? { password } : {}),
    disableOfflineQueue: true,
  });
}

export type Cache = ReturnType<typeof build>;

export async function connectCache(addr: string, password: string | undefined, log: Logger): Promise<Cache> {
  const [host, port] = splitAddr(addr);
  const client = build(host, port, password);
  let lastError = '';
  client.on('error', (err: Error) => {
    // The client emits one error per failed reconnect; log each distinct one once.
    if (err.message !== lastError) log.warn('cache connection error', { error: err.message });
    lastError = err.message;
  });
  client.on('ready', () => {
    if (lastError) log.info('cache connection restored');
    lastError = '';
  });
  await client.connect();
  return client;
}

export async function cacheAnswers(cache: Cache, timeoutMs = 1000): Promise<boolean> {
  if (!cache.isReady) return false;
  let timer: NodeJS.Timeout | undefined;
  try {
    const pong = await Promise.race([
      cache.ping(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('timeout')), timeoutMs);
      }),
    ]);
    return pong === 'PONG';
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

export function splitAddr(addr: string): [string, number] {
  const i = addr.lastIndexOf(':');
  return [addr.slice(0, i), Number(addr.slice(i + 1))];
}
