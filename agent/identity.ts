// The SoulSeed under `paths.seed` (interface spec 2.2): key.pem (the private key, mode 0600, made
// here and never sent), cert.pem (the soul's certificate) and chain.pem (the PKI chain). Writing
// never overwrites: an existing identity is a guard against accidental re-enrollment.
import fs from 'node:fs';
import path from 'node:path';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { SoulError, identityExists } from './errors';

export const SEED_FILES = { key: 'key.pem', cert: 'cert.pem', chain: 'chain.pem' } as const;

export interface Identity { keyPem: string; certPem: string; chainPem: string; sid: string; notAfter: Date }

export function identityPresent(seed: string): boolean {
  return Object.values(SEED_FILES).some((f) => fs.existsSync(path.join(seed, f)));
}

/** Stores a new identity; refuses if any part of one is present. Leaves nothing behind on failure. */
export function storeIdentity(seed: string, parts: { keyPem: string; certPem: string; chainPem: string }): void {
  if (identityPresent(seed)) throw identityExists(seed);
  fs.mkdirSync(seed, { recursive: true, mode: 0o700 });
  const written: string[] = [];
  const write = (name: string, data: string, mode: number) => {
    const file = path.join(seed, name);
    // 'wx': fail rather than replace if a concurrent init got there first.
    fs.writeFileSync(file, data, { flag: 'wx', mode });
    fs.chmodSync(file, mode); // the umask may have narrowed or widened nothing, but make the mode exact
    written.push(file);
  };
  try {
    write(SEED_FILES.key, parts.keyPem, 0o600);
    write(SEED_FILES.cert, parts.certPem, 0o644);
    write(SEED_FILES.chain, parts.chainPem, 0o644);
  } catch (err) {
    for (const f of written) fs.rmSync(f, { force: true });
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw identityExists(seed);
    throw new SoulError(`cannot write the identity under ${seed}: ${(err as Error).message}`, 'make paths.seed writable by the soul');
  }
}

/** Reads the identity for `soul run`; the certificate's CN is the SID. */
export function loadIdentity(seed: string): Identity {
  let keyPem: string; let certPem: string; let chainPem: string;
  try {
    keyPem = fs.readFileSync(path.join(seed, SEED_FILES.key), 'utf8');
    certPem = fs.readFileSync(path.join(seed, SEED_FILES.cert), 'utf8');
    chainPem = fs.readFileSync(path.join(seed, SEED_FILES.chain), 'utf8');
  } catch (err) {
    throw new SoulError(`no identity under ${seed} (${(err as NodeJS.ErrnoException).code ?? 'unreadable'})`,
      'onboard this host first with soul init --config=<path> --token=<bootstrap token>');
  }
  const cert = new X509Certificate(certPem);
  if (!cert.checkPrivateKey(createPrivateKey(keyPem))) {
    throw new SoulError(`the certificate under ${seed} does not belong to its key`, `remove ${seed} and re-enroll with a new token`);
  }
  return { keyPem, certPem, chainPem, sid: commonName(cert), notAfter: new Date(cert.validTo) };
}

export function commonName(cert: X509Certificate): string {
  const m = /(?:^|\n)CN=([^\n]+)/.exec(cert.subject);
  return (m?.[1] ?? '').toLowerCase();
}
