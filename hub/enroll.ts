// The onboarding decision (interface spec 3.3, 4.4): token + CSR in, certificate + chain out.
// Order: the token must have been issued for the SID the host asks as (checked without spending,
// so a misconfigured host does not burn it), then it is spent atomically (one winner among
// concurrent uses), then the PKI signs with the SID from the token's host record as the only name,
// and the certificate it returns is checked (hub/soul-certificate.ts). If no certificate is handed
// out the spend is undone: for a PKI outage the host simply retries; for a PKI that refused the CSR
// or issued a misfit, the soul hears a clear refusal, and the token stays valid so that the host can
// onboard once an operator fixed the role (the failure counts against the token's limit, so a token
// cannot be used to hammer the PKI). The four token failures are told apart only in logs and
// metrics; the soul hears one message.
import type { Knex } from 'knex';
import type { Logger } from '../common/logger';
import { spendBootstrapToken } from '../db/repos/bootstrap-tokens';
import { tokenSid, unspendBootstrapToken } from '../db/repos/enrollment';
import { markOnboarded } from '../db/repos/souls';
import type { EnrollRequest, EnrollResponse } from '../proto/types';
import type { HandshakeOutcome } from './metrics';
import { signSoulCertificate, type SoulSigner } from './soul-certificate';

export const TOKEN_REFUSED = 'bootstrap token invalid, expired or used';
const MAX_CSR_BYTES = 16 * 1024;
const MAX_SID_LENGTH = 253;

export interface EnrollDeps extends SoulSigner {
  db: Knex;
  log: Logger;
  now?: () => Date;
  /**
   * Closes, on every keeper, the streams of `sid` opened with any certificate but `keepSerial`
   * (hub/revocations.ts publishRetired); awaited before the new certificate is handed out.
   */
  retire?: (sid: string, keepSerial: string) => Promise<void>;
}

export type EnrollOutcome =
  | { ok: true; response: EnrollResponse }
  | {
      ok: false;
      kind: 'refused' | 'bad_request' | 'unavailable' | 'pki_refused';
      outcome: HandshakeOutcome;
      details: string;
    };

function refused(outcome: HandshakeOutcome): EnrollOutcome {
  return { ok: false, kind: 'refused', outcome, details: TOKEN_REFUSED };
}

export async function enroll(deps: EnrollDeps, req: EnrollRequest): Promise<EnrollOutcome> {
  const sid = typeof req.sid === 'string' ? req.sid.toLowerCase() : '';
  if (typeof req.token !== 'string' || req.token.length === 0 || req.token.length > 256)
    return refused('token_invalid');
  if (sid.length === 0 || sid.length > MAX_SID_LENGTH)
    return { ok: false, kind: 'bad_request', outcome: 'bad_request', details: 'sid is missing or too long' };
  if (
    typeof req.csr_pem !== 'string' ||
    req.csr_pem.length > MAX_CSR_BYTES ||
    !req.csr_pem.includes('-----BEGIN CERTIFICATE REQUEST-----')
  ) {
    return {
      ok: false,
      kind: 'bad_request',
      outcome: 'bad_request',
      details: 'csr_pem must be one PEM certificate request',
    };
  }

  const issuedFor = await tokenSid(deps.db, req.token);
  if (issuedFor !== undefined && issuedFor !== sid) {
    deps.log.warn('bootstrap token presented for another SID', { sid, issued_for: issuedFor });
    return refused('token_wrong_sid');
  }
  const spent = await spendBootstrapToken(deps.db, req.token, deps.now ? { now: deps.now() } : {});
  if (!spent.ok) {
    deps.log.warn('bootstrap token refused', { sid, reason: spent.reason });
    return refused(
      spent.reason === 'invalid' ? 'token_invalid' : spent.reason === 'expired' ? 'token_expired' : 'token_used',
    );
  }

  // The CN and the only SAN come from the host record; the PKI role ignores the CSR's names.
  const issued = await signSoulCertificate(deps, req.csr_pem, spent.sid, 'onboarding');
  if (!issued.ok) {
    const restored = await unspendBootstrapToken(deps.db, req.token).catch(() => false);
    deps.log.warn('no certificate handed out; the token is valid again', { sid, token_restored: restored });
    if (issued.kind === 'unavailable')
      return { ok: false, kind: 'unavailable', outcome: 'pki_error', details: issued.details };
    return { ok: false, kind: 'pki_refused', outcome: issued.kind, details: issued.details };
  }
  const signed = issued.signed;
  await markOnboarded(deps.db, spent.sid, signed.serialNumber, new Date(), issued.notAfter).catch((err: Error) =>
    deps.log.warn('cannot record onboarding', { sid, error: err.message }),
  );
  // Re-onboarding: the streams of the soul's earlier certificates end before the new identity
  // exists on the host, so none of them is sent another step (a secret among them). Without that
  // message on its way, no certificate is handed out: the host retries with the same token.
  try {
    await deps.retire?.(spent.sid, signed.serialNumber);
  } catch (err) {
    const restored = await unspendBootstrapToken(deps.db, req.token).catch(() => false);
    deps.log.warn('cannot close the streams of earlier certificates; no certificate handed out', {
      sid,
      error: (err as Error).message,
      token_restored: restored,
    });
    return {
      ok: false,
      kind: 'unavailable',
      outcome: 'presence_error',
      details: 'the keeper cannot reach its cache to close the streams of earlier certificates; retry',
    };
  }
  const notAfter = issued.notAfter.getTime();
  deps.log.info('soul enrolled', { sid: spent.sid, serial: signed.serialNumber });
  return {
    ok: true,
    response: {
      sid: spent.sid,
      certificate_pem: signed.certificate,
      chain_pem: signed.caChain,
      serial: signed.serialNumber,
      not_after_ms: notAfter,
    },
  };
}
