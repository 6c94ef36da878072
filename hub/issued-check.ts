// Every certificate the PKI hands back is checked before a soul gets it (onboarding and rotation):
// the PKI role is configuration an operator can get wrong (a role that honours CSR names, or a
// server role, or one with a long max_ttl), and then a soul could receive a certificate for another
// SID, for a server, or a CA. Anything that is not exactly a soul certificate for this SID is
// refused and logged as a PKI misconfiguration (docs/certificates.md).
import { X509Certificate } from 'node:crypto';

const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';
/** The PKI backdates notBefore (30 s by default) and clocks differ a little: tolerated on both ends. */
const SKEW_MS = 5 * 60_000;

export type IssuedCheck = { ok: true; notAfter: Date } | { ok: false; problem: string };

export function checkSoulCertificate(pem: string, sid: string, maxLifetimeMs: number, now = new Date()): IssuedCheck {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(pem);
  } catch (err) {
    return { ok: false, problem: `the PKI returned no readable certificate (${(err as Error).message})` };
  }
  const subject = cert.subject.split('\n').filter((l) => l !== '');
  if (subject.length !== 1 || subject[0] !== `CN=${sid}`) {
    return {
      ok: false,
      problem: `the subject is "${subject.join(', ')}", not CN=${sid} alone (does the role use the CSR's names?)`,
    };
  }
  const sans = (cert.subjectAltName ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (sans.length !== 1 || sans[0] !== `DNS:${sid}`) {
    return { ok: false, problem: `the subject alternative names are "${sans.join(', ')}", not DNS:${sid} alone` };
  }
  const eku = cert.keyUsage ?? [];
  if (eku.length !== 1 || eku[0] !== CLIENT_AUTH) {
    return {
      ok: false,
      problem: `the extended key usage is [${eku.join(', ')}], not client authentication only (is it a server role?)`,
    };
  }
  if (cert.ca) return { ok: false, problem: 'the certificate is a CA certificate' };
  const notBefore = Date.parse(cert.validFrom);
  const notAfter = Date.parse(cert.validTo);
  if (notAfter <= now.getTime()) return { ok: false, problem: `the certificate expired at ${cert.validTo}` };
  if (notBefore > now.getTime() + SKEW_MS)
    return { ok: false, problem: `the certificate is valid only from ${cert.validFrom}` };
  if (notAfter - now.getTime() > maxLifetimeMs + SKEW_MS) {
    return {
      ok: false,
      problem: `the certificate is valid until ${cert.validTo}, longer than the ${Math.round(maxLifetimeMs / 1000)} s a soul certificate may live`,
    };
  }
  return { ok: true, notAfter: new Date(notAfter) };
}
