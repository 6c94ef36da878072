// Revocation reaches every keeper at once: the API publishes the SID on a Redis channel, and each
// keeper closes its own stream of that soul (goodbye{revoked}). The handshake refuses a revoked
// soul from then on (hub/event-stream-server.ts), so a soul that held no stream anywhere, or one
// whose keeper missed the message during a cache outage, is refused when it next connects.
import type { Logger } from '../common/logger';
import type { Cache } from '../platform/cache';
import type { Component } from '../platform/component';
import type { Sessions } from './sessions';

export const REVOKED_CHANNEL = 'keeper:souls:revoked';

export async function publishRevoked(cache: Cache, sid: string): Promise<void> {
  await cache.publish(REVOKED_CHANNEL, sid);
}

export function revocationListener(cache: Cache, sessions: Sessions, log: Logger): Component {
  let sub: Cache | undefined;
  return {
    name: 'revocation listener',
    async start() {
      // A subscribed connection can do nothing else, so it is a connection of its own.
      sub = cache.duplicate();
      sub.on('error', () => { /* reconnects by itself; the main connection logs cache trouble */ });
      await sub.connect();
      await sub.subscribe(REVOKED_CHANNEL, (sid: string) => {
        void sessions.revoke(sid).then((closed) => {
          if (closed) log.info('revoked soul disconnected', { sid });
        });
      });
    },
    async stop() {
      await sub?.quit().catch(() => undefined);
    },
  };
}
