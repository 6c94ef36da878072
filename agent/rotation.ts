// The soul's side of certificate rotation on a live stream (docs/certificates.md): at two thirds of
// the certificate's lifetime (plus a little jitter, so a fleet onboarded together does not ask all
// at once) make a new key and CSR, send RenewCertificate, check what comes back and stage it on
// disk. The keeper then ends the stream with goodbye{rotated} when no step is in flight, and
// agent/run.ts reconnects with the staged identity. A refusal is logged and asked again later.
import type { KeyObject } from 'node:crypto';
import type { Logger } from '../common/logger';
import type { CertificateRenewed, OutgoingSoulMessage, RenewalRefused } from '../proto/types';
import { createCsr, generateKey, privateKeyPem } from './csr';
import { verifyIssued } from './verify-issued';

export interface RotationOptions {
  sid: string;
  ca: Buffer;
  notBefore: Date;
  notAfter: Date;
  log: Logger;
  /** Writes the new identity (agent/identity.ts stageIdentity). */
  stage(parts: { keyPem: string; certPem: string; chainPem: string }): void;
  /** Counts outcomes in the soul's metrics: renewed, refused, invalid. */
  count(outcome: 'renewed' | 'refused' | 'invalid'): void;
  random?: () => number;
}

/** When the soul asks: two thirds into the lifetime, plus up to a thirtieth of it. */
export function rotationTime(notBefore: Date, notAfter: Date, random = Math.random): number {
  const lifetime = notAfter.getTime() - notBefore.getTime();
  return notBefore.getTime() + (lifetime * 2) / 3 + random() * (lifetime / 30);
}

export class Rotation {
  private timer: NodeJS.Timeout | undefined;
  private key: KeyObject | undefined;
  private send: ((m: OutgoingSoulMessage) => void) | undefined;
  /** A new identity is staged: the stream is only waiting for the keeper's goodbye{rotated}. */
  staged = false;

  constructor(private readonly o: RotationOptions) {}

  private get lifetimeMs(): number {
    return this.o.notAfter.getTime() - this.o.notBefore.getTime();
  }

  /** Starts the clock once the keeper welcomed the stream. */
  start(send: (m: OutgoingSoulMessage) => void): void {
    this.send = send;
    this.schedule(rotationTime(this.o.notBefore, this.o.notAfter, this.o.random) - Date.now());
  }

  stop(): void {
    clearTimeout(this.timer);
    this.send = undefined;
  }

  private schedule(ms: number): void {
    clearTimeout(this.timer);
    if (this.staged || !this.send) return;
    this.timer = setTimeout(() => this.ask(), Math.max(1000, Math.min(ms, 2 ** 31 - 1)));
    this.timer.unref();
  }

  private ask(): void {
    if (!this.send || this.staged) return;
    this.key = generateKey();
    this.o.log.info('renewing the certificate', { not_after: this.o.notAfter.toISOString() });
    this.send({ renew_certificate: { csr_pem: createCsr(this.key, this.o.sid) } });
  }

  onRenewed(m: CertificateRenewed): void {
    if (!this.key || this.staged) return;
    try {
      const cert = verifyIssued(m.certificate_pem, m.chain_pem, this.o.sid, this.o.ca, this.key);
      this.o.stage({ keyPem: privateKeyPem(this.key), certPem: m.certificate_pem, chainPem: m.chain_pem.join('\n') });
      this.staged = true;
      this.o.count('renewed');
      this.o.log.info('certificate renewed; reconnecting with it once the keeper ends this stream', {
        serial: m.serial,
        not_after: cert.validTo,
      });
    } catch (err) {
      this.o.count('invalid');
      this.o.log.error('the renewed certificate was not accepted', { error: (err as Error).message });
      this.schedule(Math.max(5000, this.lifetimeMs / 10));
    }
  }

  onRefused(m: RenewalRefused): void {
    this.o.count('refused');
    this.o.log.warn('the keeper refused to renew the certificate', { reason: m.reason, retryable: m.retryable });
    // Asked again later either way: a PKI outage passes, and an operator may fix a refusing role.
    this.schedule(Math.max(2000, this.lifetimeMs / (m.retryable ? 30 : 10)));
  }
}
