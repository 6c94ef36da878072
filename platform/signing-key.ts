// The operator-token signing key as the secrets store holds it: 32 random bytes in base64
// (interface spec 4.6). Decoded once at start by the runtime; the API signs and verifies with it.

/** Decodes the base64 signing key and insists on 32 bytes, so a mis-provisioned key fails at start. */
export function decodeSigningKey(b64: string): Uint8Array {
  const key = Buffer.from(b64, 'base64');
  if (key.length !== 32 || key.toString('base64') !== b64.trim()) {
    throw new Error(
      `auth.jwt signing_key must be 32 random bytes in base64 (got ${key.length} bytes); generate one with: openssl rand -base64 32`,
    );
  }
  return new Uint8Array(key);
}
