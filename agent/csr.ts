// The soul's key pair and certificate request. The key is EC P-256, made with node:crypto on the
// host and never sent anywhere; the CSR carries only the public key and the SID as common name
// (the keeper ignores CSR names anyway and takes them from the host record). The CSR is written
// with a small DER encoder (agent/der.ts) instead of a dependency or the openssl CLI: a soul then
// needs nothing on the host beyond Node, and the format is fixed and tiny (docs/agents.md).
import { createPublicKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { bits, context, integer, octets, oid, pem, sequence, set, tlv, utf8 } from './der';

const OID_COMMON_NAME = '2.5.4.3';
const OID_ECDSA_SHA256 = '1.2.840.10045.4.3.2';
const OID_EXTENSION_REQUEST = '1.2.840.113549.1.9.14';
const OID_SUBJECT_ALT_NAME = '2.5.29.17';
const DNS_NAME_TAG = 0x82; // GeneralName dNSName, [2] IMPLICIT IA5String

export function generateKey(): KeyObject {
  return generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
}

export function privateKeyPem(key: KeyObject): string {
  return key.export({ type: 'pkcs8', format: 'pem' }) as string;
}

/**
 * A PKCS#10 request signed with the EC private `key`. `requestDnsNames` adds a subjectAltName
 * extension request; the soul never uses it: it lets tests show the keeper ignores CSR names.
 */
export function createCsr(key: KeyObject, commonName: string, requestDnsNames: string[] = []): string {
  if (key.type !== 'private' || key.asymmetricKeyType !== 'ec')
    throw new TypeError('createCsr: an EC private key is required');
  const subject = sequence(set(sequence(oid(OID_COMMON_NAME), utf8(commonName))));
  const spki = createPublicKey(key).export({ type: 'spki', format: 'der' });
  const attributes =
    requestDnsNames.length === 0
      ? Buffer.alloc(0)
      : sequence(
          oid(OID_EXTENSION_REQUEST),
          set(
            sequence(
              sequence(
                oid(OID_SUBJECT_ALT_NAME),
                octets(sequence(...requestDnsNames.map((n) => tlv(DNS_NAME_TAG, Buffer.from(n, 'ascii'))))),
              ),
            ),
          ),
        );
  const info = sequence(integer(0), subject, spki, context(0, attributes));
  const signature = sign('sha256', info, { key, dsaEncoding: 'der' });
  return pem('CERTIFICATE REQUEST', sequence(info, sequence(oid(OID_ECDSA_SHA256)), bits(signature)));
}
