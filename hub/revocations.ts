// A soul's earlier certificates lose their streams at once, on every keeper: revocation (every
// certificate of the soul), re-onboarding (every certificate but the one just issued) and rotation
// (every certificate but the renewed one, at its first handshake) publish the SID on one Redis
// channel, and each keeper closes its own streams of that soul opened with a certificate other than
// the one kept. The handshake refuses such certificates from then on (hub/event-stream-server.ts),
// so a soul that held no stream anywhere, or one whose keeper missed the message during a cache
// outage, is refused when it next connects. A step in flight on a closed stream is interrupted
// (the run records it `unknown`).
//
// The message is the SID alone for a revocation (as keepers before re-onboarding closes sent it),
// or `<sid> <serial>`: close the streams of `sid` whose certificate is not `serial`.
import type { Logger } from '../common/logger';
import type { Cache } from '../platform/cache';
import type { Component } from '../platform/component';
import type { Sessions } from './sessions';

export const REVOKED_CHANNEL = 'keeper:souls:revoked';

export async function publishRevoked(cache: Cache, sid: string): Promise<void> {
  await cache.publish(REVOKED_CHANNEL, sid);
}

/**
 * Every stream of `sid` whose certificate is not `keepSerial` is closed, on every keeper. Awaited
 * before the new certificate is handed out (or admitted): Redis has queued the message to every
 * subscribed keeper when PUBLISH answers, and the soul still has a TLS handshake to make.
 */
export async function publishRetired(cache: Cache, sid: string, keepSerial: string): Promise<void> {
  await cache.publish(REVOKED_CHANNEL, `${sid} ${keepSerial}`);
}

export function revocationListener(cache: Cache, sessions: Sessions, log: Logger): Component {
  let sub: Cache | undefined;
  return {
    name: 'revocation listener',
    async start() {
      // A subscribed connection can do nothing else, so it is a connection of its own.
      sub = cache.duplicate();
      sub.on('error', () => {
        /* reconnects by itself; the main connection logs cache trouble */
      });
      await sub.connect();
      await sub.subscribe(REVOKED_CHANNEL, (message: string) => {
        const [sid, keep] = message.split(' ');
        if (!sid) return;
        if (keep === undefined) {
          void sessions.revoke(sid).then((closed) => {
            if (closed) log.info('revoked soul disconnected', { sid });
          });
          return;
        }
        void sessions.retire(sid, keep).then((closed) => {
          if (closed) log.info('stream of a replaced certificate closed', { sid });
        });
      });
    },
    async stop() {
      await sub?.quit().catch(() => undefined);
    },
  };
}
