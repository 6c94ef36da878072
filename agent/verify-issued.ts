// What a soul checks of a certificate the keeper hands it (onboarding and rotation): for its own
// key, naming only its SID, chaining to keeper.tls.ca. The keeper checks the same before sending;
// the soul does not take that on trust.
import { X509Certificate, type KeyObject } from 'node:crypto';
import { SoulError, TLS_FIX } from './errors';
import { commonName } from './identity';

export function verifyIssued(
  certPem: string,
  chainPem: string[],
  sid: string,
  ca: Buffer,
  key: KeyObject,
): X509Certificate {
  const cert = new X509Certificate(certPem);
  const root = new X509Certificate(ca);
  const issuers = [...chainPem.map((p) => new X509Certificate(p)), root];
  const fix = 'the keeper answered with a certificate that does not fit this host; report it to the cluster operator';
  if (!cert.checkPrivateKey(key)) throw new SoulError("the issued certificate is not for this host's key", fix);
  if (commonName(cert) !== sid)
    throw new SoulError(`the issued certificate names ${commonName(cert)}, not ${sid}`, fix);
  if (!issuers.some((i) => cert.checkIssued(i) && cert.verify(i.publicKey))) {
    throw new SoulError(
      'certificate validation failed: unknown authority: the issued certificate does not chain to keeper.tls.ca',
      TLS_FIX,
    );
  }
  return cert;
}
