// A soul's certificate renewed over its live stream (docs/certificates.md). The soul sends a CSR
// for a new key at two thirds of its certificate's lifetime; the keeper signs it with the SID of the
// registry record (the certificate of this stream names it; the CSR's names are never used),
// checks what the PKI returned, records the new serial as pending (admitted beside the current one
// until its first handshake, which retires the current one), answers CertificateRenewed, and lets
// Sessions end the stream for the reconnect once no step is in flight on it.
import type { Knex } from 'knex';
import { recordPending } from '../db/repos/certificates';
import type { HubMetrics } from './metrics';
import type { Session } from './session';
import type { Sessions } from './sessions';
import { signSoulCertificate, type SoulSigner } from './soul-certificate';

const MAX_CSR_BYTES = 16 * 1024;
/** Renewals are answered from half of the lifetime on (the soul asks at two thirds): a soul cannot
 * have certificates issued in a loop, and a soul whose clock is a little off still renews in time. */
const EARLIEST_FRACTION = 0.5;

export interface RenewalDeps extends SoulSigner {
  db: Knex;
  metrics: HubMetrics;
  sessions: Sessions;
}

/** The certificate this stream was opened with. */
export interface PresentedCertificate {
  serial: string;
  notBefore: number;
  notAfter: number;
}

export async function renewOnStream(
  deps: RenewalDeps,
  session: Session,
  presented: PresentedCertificate,
  csrPem: unknown,
): Promise<void> {
  const sid = session.sid;
  const refuse = (outcome: string, reason: string, retryable: boolean) => {
    deps.metrics.renewals.inc({ outcome });
    deps.log.warn('certificate renewal refused', { sid, outcome, reason });
    session.write({ renewal_refused: { reason, retryable } });
  };
  if (session.rotating)
    return refuse('refused', 'this stream already has its new certificate; reconnect with it', false);
  if (session.renewing) return refuse('refused', 'a renewal is already under way on this stream', true);
  if (
    typeof csrPem !== 'string' ||
    csrPem.length > MAX_CSR_BYTES ||
    !csrPem.includes('-----BEGIN CERTIFICATE REQUEST-----')
  ) {
    return refuse('refused', 'csr_pem must be one PEM certificate request', false);
  }
  const earliest = presented.notBefore + (presented.notAfter - presented.notBefore) * EARLIEST_FRACTION;
  if (Date.now() < earliest) {
    return refuse(
      'too_early',
      `the current certificate is renewed from ${new Date(earliest).toISOString()} on (half its lifetime)`,
      false,
    );
  }
  session.renewing = true;
  try {
    const issued = await signSoulCertificate(deps, csrPem, sid, 'rotation');
    if (!issued.ok)
      return refuse(
        issued.kind === 'unavailable' ? 'pki_error' : issued.kind,
        issued.details,
        issued.kind === 'unavailable',
      );
    const recorded = await recordPending(deps.db, sid, presented.serial, {
      serial: issued.signed.serialNumber,
      notAfter: issued.notAfter,
    });
    if (!recorded) {
      return refuse(
        'superseded',
        'this certificate is no longer the live one of this soul (onboarded again or revoked meanwhile)',
        false,
      );
    }
    if (session.closed) return; // the stream ended while signing; the pending certificate is never used
    session.write({
      certificate_renewed: {
        certificate_pem: issued.signed.certificate,
        chain_pem: issued.signed.caChain,
        serial: issued.signed.serialNumber,
        not_after_ms: issued.notAfter.getTime(),
      },
    });
    deps.metrics.renewals.inc({ outcome: 'renewed' });
    deps.log.info('soul certificate renewed', {
      sid,
      serial: issued.signed.serialNumber,
      not_after: issued.notAfter.toISOString(),
    });
    await deps.sessions.rotate(session);
  } catch (err) {
    refuse('pki_error', 'the keeper could not renew the certificate now; retry later', true);
    deps.log.warn('certificate renewal failed', { sid, error: (err as Error).message });
  } finally {
    session.renewing = false;
  }
}
