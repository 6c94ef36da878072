// Having a soul certificate signed, for onboarding and rotation alike: the names are the SID of the
// registry record (never the CSR's), the lifetime is secretstore.soul_cert_ttl, and what the PKI
// hands back is checked (hub/issued-check.ts) before anyone sees it. The outcome tells a PKI that
// cannot answer now (retry later) from one that refused or misbehaves (an operator must act).
import type { Logger } from '../common/logger';
import type { SignedCertificate } from '../secrets/client';
import { SecretStoreError } from '../secrets/errors';
import { checkSoulCertificate } from './issued-check';

export interface SoulSigner {
  signCsr(csrPem: string, commonName: string, ttl?: string): Promise<SignedCertificate>;
  soulCertTtlMs: number;
  log: Logger;
}

export type SoulCertificate =
  | { ok: true; signed: SignedCertificate; notAfter: Date }
  | { ok: false; kind: 'unavailable' | 'pki_refused' | 'pki_misconfigured'; details: string };

export const PKI_REFUSED =
  "the keeper's PKI refused the certificate request; retrying will not help until an operator fixes the PKI role (see the keeper log and docs/certificates.md)";
export const PKI_MISCONFIGURED =
  "the keeper's PKI issued a certificate that does not fit this soul, so the keeper did not hand it out; an operator must fix the PKI role (see the keeper log and docs/certificates.md)";
export const PKI_UNAVAILABLE = 'the keeper could not reach its PKI to sign the certificate; retry later';

export async function signSoulCertificate(
  deps: SoulSigner,
  csrPem: string,
  sid: string,
  what: 'onboarding' | 'rotation',
): Promise<SoulCertificate> {
  let signed: SignedCertificate;
  try {
    signed = await deps.signCsr(csrPem, sid, `${Math.max(1, Math.round(deps.soulCertTtlMs / 1000))}s`);
  } catch (err) {
    if (err instanceof SecretStoreError && (err.kind === 'refused' || err.kind === 'denied')) {
      deps.log.error('the PKI refused to sign a soul certificate', { sid, what, error: err.message });
      return { ok: false, kind: 'pki_refused', details: PKI_REFUSED };
    }
    deps.log.error('the PKI did not sign the soul certificate', { sid, what, error: (err as Error).message });
    return { ok: false, kind: 'unavailable', details: PKI_UNAVAILABLE };
  }
  const check = checkSoulCertificate(signed.certificate, sid, deps.soulCertTtlMs);
  if (!check.ok) {
    deps.log.error('PKI misconfiguration: the issued soul certificate was refused and not handed out', {
      sid,
      what,
      serial: signed.serialNumber,
      problem: check.problem,
    });
    return { ok: false, kind: 'pki_misconfigured', details: PKI_MISCONFIGURED };
  }
  return { ok: true, signed, notAfter: check.notAfter };
}
