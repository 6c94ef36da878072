// The SoulSeed under `paths.seed` (interface spec 2.2): key.pem (the private key, mode 0600, made
// here and never sent), cert.pem (the soul's certificate) and chain.pem (the PKI chain). Writing
// never overwrites: an existing identity is a guard against accidental re-enrollment.
//
// A rotation's identity is staged under `next/` first (each file written to a temporary name,
// flushed, renamed; the pair checked on reading). While a complete `next/` exists it is the one the
// soul connects with; once it has connected, it is copied over the main files and `next/` removed.
// A crash at any point leaves either the old identity or the staged one whole (docs/certificates.md).
import fs from 'node:fs';
import path from 'node:path';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { SoulError, identityExists } from './errors';

export const SEED_FILES = { key: 'key.pem', cert: 'cert.pem', chain: 'chain.pem' } as const;

export interface Identity {
  keyPem: string;
  certPem: string;
  chainPem: string;
  sid: string;
  notBefore: Date;
  notAfter: Date;
}

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
    throw new SoulError(
      `cannot write the identity under ${seed}: ${(err as Error).message}`,
      'make paths.seed writable by the soul',
    );
  }
}

/** Reads the identity for `soul run`; the certificate's CN is the SID. */
export function loadIdentity(seed: string): Identity {
  let keyPem: string;
  let certPem: string;
  let chainPem: string;
  try {
    keyPem = fs.readFileSync(path.join(seed, SEED_FILES.key), 'utf8');
    certPem = fs.readFileSync(path.join(seed, SEED_FILES.cert), 'utf8');
    chainPem = fs.readFileSync(path.join(seed, SEED_FILES.chain), 'utf8');
  } catch (err) {
    throw new SoulError(
      `no identity under ${seed} (${(err as NodeJS.ErrnoException).code ?? 'unreadable'})`,
      'onboard this host first with soul init --config=<path> --token=<bootstrap token>',
    );
  }
  const cert = new X509Certificate(certPem);
  if (!cert.checkPrivateKey(createPrivateKey(keyPem))) {
    throw new SoulError(
      `the certificate under ${seed} does not belong to its key`,
      `remove ${seed} and re-enroll with a new token`,
    );
  }
  return {
    keyPem,
    certPem,
    chainPem,
    sid: commonName(cert),
    notBefore: new Date(cert.validFrom),
    notAfter: new Date(cert.validTo),
  };
}

const NEXT_DIR = 'next';

function writeAtomic(file: string, data: string, mode: number): void {
  const tmp = `${file}.tmp`;
  const fd = fs.openSync(tmp, 'w', mode);
  try {
    fs.writeSync(fd, data);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.chmodSync(tmp, mode);
  fs.renameSync(tmp, file);
}

const MODES = { key: 0o600, cert: 0o644, chain: 0o644 } as const;

/** Stages a rotation's identity under <seed>/next/, replacing an earlier staged one. */
export function stageIdentity(seed: string, parts: { keyPem: string; certPem: string; chainPem: string }): void {
  const dir = path.join(seed, NEXT_DIR);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { mode: 0o700 });
  writeAtomic(path.join(dir, SEED_FILES.key), parts.keyPem, MODES.key);
  writeAtomic(path.join(dir, SEED_FILES.chain), parts.chainPem, MODES.chain);
  writeAtomic(path.join(dir, SEED_FILES.cert), parts.certPem, MODES.cert);
}

/** The staged identity, when it is complete and its certificate belongs to its key. */
export function loadStagedIdentity(seed: string): Identity | undefined {
  const dir = path.join(seed, NEXT_DIR);
  if (!fs.existsSync(path.join(dir, SEED_FILES.cert))) return undefined;
  try {
    return loadIdentity(dir);
  } catch {
    return undefined; // half written: the main identity is still whole
  }
}

/** The staged identity connected: it becomes the main one. */
export function promoteStagedIdentity(seed: string): void {
  const staged = loadStagedIdentity(seed);
  if (!staged) return;
  writeAtomic(path.join(seed, SEED_FILES.key), staged.keyPem, MODES.key);
  writeAtomic(path.join(seed, SEED_FILES.chain), staged.chainPem, MODES.chain);
  writeAtomic(path.join(seed, SEED_FILES.cert), staged.certPem, MODES.cert);
  fs.rmSync(path.join(seed, NEXT_DIR), { recursive: true, force: true });
}

export function discardStagedIdentity(seed: string): void {
  fs.rmSync(path.join(seed, NEXT_DIR), { recursive: true, force: true });
}

/** True when the identity present (staged or main) holds only an expired certificate. */
export function identityExpired(seed: string, now = Date.now()): boolean {
  const staged = loadStagedIdentity(seed);
  if (staged && staged.notAfter.getTime() > now) return false;
  try {
    return loadIdentity(seed).notAfter.getTime() <= now;
  } catch {
    return false;
  }
}

/** Removes an identity (soul init replaces an expired one). */
export function removeIdentity(seed: string): void {
  for (const f of Object.values(SEED_FILES)) fs.rmSync(path.join(seed, f), { force: true });
  discardStagedIdentity(seed);
}

export function commonName(cert: X509Certificate): string {
  const m = /(?:^|\n)CN=([^\n]+)/.exec(cert.subject);
  return (m?.[1] ?? '').toLowerCase();
}
