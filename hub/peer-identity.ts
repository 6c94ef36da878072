// The SID of an event-stream call, from the client certificate the TLS layer verified against the
// CA (interface spec 5; ARCHITECTURE 4). Never from the payload. A certificate qualifies only if
// it is a soul certificate: client-auth usage, and its CN is also its DNS SAN (the bootstrap
// listener issues exactly that shape).
import type { PeerCertificate } from 'node:tls';

const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';

export type PeerIdentity =
  | { ok: true; sid: string; serial: string; notBefore: number; notAfter: number }
  | { ok: false; reason: string };

/** `call.getAuthContext()` of grpc-js: only set when the TLS socket is authorized (chain verified). */
export interface AuthContextLike {
  transportSecurityType?: string;
  sslPeerCertificate?: PeerCertificate;
}

export function peerIdentity(auth: AuthContextLike | null | undefined): PeerIdentity {
  const cert = auth?.sslPeerCertificate;
  if (auth?.transportSecurityType !== 'ssl' || !cert || !cert.raw)
    return { ok: false, reason: 'no verified client certificate' };
  const cn = firstValue(cert.subject?.CN);
  if (!cn) return { ok: false, reason: 'the client certificate has no common name' };
  const eku = (cert as PeerCertificate & { ext_key_usage?: string[] }).ext_key_usage;
  if (!eku || !eku.includes(CLIENT_AUTH))
    return { ok: false, reason: 'the client certificate is not for client authentication' };
  const sans = (cert.subjectaltname ?? '').split(',').map((s) => s.trim());
  if (!sans.includes(`DNS:${cn}`))
    return { ok: false, reason: 'the client certificate does not name its common name as DNS SAN' };
  return {
    ok: true,
    sid: cn.toLowerCase(),
    serial: cert.serialNumber,
    notBefore: Date.parse(cert.valid_from),
    notAfter: Date.parse(cert.valid_to),
  };
}

function firstValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}
