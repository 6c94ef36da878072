// Keeps the gRPC listeners' leaf fresh: with secretstore.server_leaf set, a new leaf is issued from
// the PKI's server role at two thirds of the current one's lifetime (and at start when the leaf on
// disk is already past that point or expired), checked, served by the running listeners
// (hub/server-leaf.ts, no restart, no stream dropped) and written to the listeners' files. Without
// server_leaf the files are watched, so an operator's re-provisioned leaf is served the same way.
import { X509Certificate } from 'node:crypto';
import type { Logger } from '../common/logger';
import type { IssueRequest, IssuedCertificate } from '../secrets/client';
import type { HubMetrics } from './metrics';
import type { ServerLeaf } from './server-leaf';

const SERVER_AUTH = '1.3.6.1.5.5.7.3.1';
const FILE_CHECK_MS = 30_000;

export interface LeafRenewalOptions {
  leaf: ServerLeaf;
  /** secretstore.server_leaf; absent: only watch the files. */
  renew?: { role: string; commonName: string; altNames: string[]; ipSans: string[]; ttlMs: number };
  issue(req: IssueRequest): Promise<IssuedCertificate>;
  log: Logger;
  metrics: HubMetrics;
}

/** When a certificate is due: two thirds into its lifetime. */
export function renewalTime(cert: X509Certificate): number {
  const from = Date.parse(cert.validFrom);
  const to = Date.parse(cert.validTo);
  return from + ((to - from) * 2) / 3;
}

/** A server leaf fit to serve: the configured name, server auth, not a CA, for the key that came with it. */
function checkServerLeaf(issued: IssuedCertificate, commonName: string): string | undefined {
  const cert = new X509Certificate(issued.certificate);
  if (!cert.subject.split('\n').includes(`CN=${commonName}`))
    return `the subject is "${cert.subject}", not CN=${commonName}`;
  if (!(cert.keyUsage ?? []).includes(SERVER_AUTH)) return 'the certificate is not for server authentication';
  if (cert.ca) return 'the certificate is a CA certificate';
  if (Date.parse(cert.validTo) <= Date.now()) return 'the certificate is already expired';
  return undefined;
}

export function leafRenewalComponent(o: LeafRenewalOptions): {
  name: string;
  start(): Promise<void>;
  stop(): Promise<void>;
} {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const notAfter = () => {
    const c = o.leaf.current();
    if (c) o.metrics.leafNotAfter.set(Date.parse(c.validTo) / 1000);
  };

  const renew = async (): Promise<boolean> => {
    const r = o.renew!;
    let issued: IssuedCertificate;
    try {
      issued = await o.issue({
        role: r.role,
        commonName: r.commonName,
        altNames: r.altNames,
        ipSans: r.ipSans,
        ttl: `${Math.max(1, Math.round(r.ttlMs / 1000))}s`,
      });
    } catch (err) {
      o.metrics.leafRenewals.inc({ outcome: 'pki_error' });
      o.log.error('cannot renew the keeper certificate; the listeners keep the current one', {
        error: (err as Error).message,
      });
      return false;
    }
    const problem = checkServerLeaf(issued, r.commonName);
    if (problem) {
      o.metrics.leafRenewals.inc({ outcome: 'pki_misconfigured' });
      o.log.error('PKI misconfiguration: the renewed keeper certificate was refused', {
        serial: issued.serialNumber,
        problem,
      });
      return false;
    }
    const chain =
      [
        issued.certificate.trim(),
        ...issued.caChain.map((c) => c.trim()).filter((c) => c !== issued.issuingCa.trim()),
      ].join('\n') + '\n';
    const key = issued.privateKey.trim() + '\n';
    o.leaf.serve(chain, key);
    const unwritten = o.leaf.persist(chain, key);
    if (unwritten.length > 0)
      o.log.warn(
        'the renewed keeper certificate could not be written; it is served from memory and renewed again at the next start',
        {
          files: unwritten,
          errors: o.leaf.lastErrors,
          fix: "keep the leaf in a folder the keeper's user may write (/var/lib/keeper/tls under keeper.service, docs/install.md)",
        },
      );
    o.metrics.leafRenewals.inc({ outcome: 'renewed' });
    notAfter();
    o.log.info('keeper certificate renewed', {
      serial: issued.serialNumber,
      not_after: new X509Certificate(issued.certificate).validTo,
    });
    return true;
  };

  const schedule = (ms: number) => {
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(() => void tick(), Math.max(100, Math.min(ms, 2 ** 31 - 1)));
    timer.unref();
  };

  const tick = async () => {
    if (o.leaf.reloadIfChanged()) {
      o.metrics.leafRenewals.inc({ outcome: 'reloaded' });
      notAfter();
      o.log.info('keeper certificate files changed; the listeners serve the new certificate');
    }
    const current = o.leaf.current();
    if (!o.renew || !current) return schedule(FILE_CHECK_MS);
    const due = renewalTime(current);
    if (Date.now() >= due) {
      const ok = await renew();
      if (!ok) {
        // Retry well before expiry: a tenth of what is left, between 1 s and a minute.
        const left = Date.parse(current.validTo) - Date.now();
        return schedule(Math.min(60_000, Math.max(1000, left / 10)));
      }
      return schedule(Math.min(FILE_CHECK_MS, renewalTime(o.leaf.current()!) - Date.now()));
    }
    schedule(Math.min(FILE_CHECK_MS, due - Date.now()));
  };

  return {
    name: 'keeper certificate renewal',
    // Started after the listeners: a leaf already due is renewed at once and served to them.
    async start() {
      notAfter();
      await tick();
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
