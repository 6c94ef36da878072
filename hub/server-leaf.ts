// The keeper's own TLS leaf as the gRPC listeners serve it. Each listener's credentials are built on
// a certificate provider (grpc-js `experimental.createCertificateProviderServerCredentials`): when the
// leaf changes, grpc-js calls setSecureContext on the listening server, so new handshakes get the new
// certificate while established connections, and the soul streams on them, carry on untouched.
// The leaf changes when hub/leaf-renewal.ts renews it from the PKI, or when its files change on disk.
import fs from 'node:fs';
import path from 'node:path';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';

type CertificateProvider = grpc.experimental.CertificateProvider;
type IdentityCertificateUpdateListener = grpc.experimental.IdentityCertificateUpdateListener;
type CaCertificateUpdateListener = grpc.experimental.CaCertificateUpdateListener;

export interface LeafFiles {
  cert: string;
  key: string;
}

/** One listener's certificate source: its leaf (identity) and, for mTLS, the CA clients must chain to. */
class LeafProvider implements CertificateProvider {
  private readonly identityListeners = new Set<IdentityCertificateUpdateListener>();
  private readonly caListeners = new Set<CaCertificateUpdateListener>();

  constructor(
    public identity: { certificate: Buffer; privateKey: Buffer },
    public ca: Buffer | null,
  ) {}

  // Listeners hear the current value on a later microtask: grpc-js registers its provider listeners
  // before its own watcher, so a synchronous first update would reach nobody.
  addIdentityCertificateListener(l: IdentityCertificateUpdateListener): void {
    this.identityListeners.add(l);
    queueMicrotask(() => {
      if (this.identityListeners.has(l)) l(this.identity);
    });
  }
  removeIdentityCertificateListener(l: IdentityCertificateUpdateListener): void {
    this.identityListeners.delete(l);
  }
  addCaCertificateListener(l: CaCertificateUpdateListener): void {
    this.caListeners.add(l);
    queueMicrotask(() => {
      if (this.caListeners.has(l) && this.ca) l({ caCertificate: this.ca });
    });
  }
  removeCaCertificateListener(l: CaCertificateUpdateListener): void {
    this.caListeners.delete(l);
  }

  update(identity: { certificate: Buffer; privateKey: Buffer }): void {
    this.identity = identity;
    for (const l of this.identityListeners) l(identity);
  }
}

export class ServerLeaf {
  /** Per listener: its files, its provider, and the file contents last read or written (what a change is measured against). */
  private readonly providers = new Map<
    string,
    { files: LeafFiles; provider: LeafProvider; onDisk: { cert: Buffer; key: Buffer } }
  >();

  /** Server credentials for one listener; `caFile` set: clients must present a certificate chaining to it. */
  credentials(files: LeafFiles, caFile: string | null): grpc.ServerCredentials {
    const identity = { certificate: fs.readFileSync(files.cert), privateKey: fs.readFileSync(files.key) };
    const provider = new LeafProvider(identity, caFile === null ? null : fs.readFileSync(caFile));
    this.providers.set(`${files.cert}\0${files.key}\0${caFile ?? ''}`, {
      files,
      provider,
      onDisk: { cert: identity.certificate, key: identity.privateKey },
    });
    // grpc-js names these parameters (ca, identity) but passes the first as the identity provider;
    // one object serving both sides makes the order irrelevant.
    return grpc.experimental.createCertificateProviderServerCredentials(
      provider,
      caFile === null ? null : provider,
      caFile !== null,
    );
  }

  /** The certificate the listeners serve now (the first listener's; renewal keeps them alike). */
  current(): X509Certificate | undefined {
    const first = this.providers.values().next().value;
    return first ? new X509Certificate(first.provider.identity.certificate) : undefined;
  }

  /** Distinct cert/key file pairs of the listeners. */
  files(): LeafFiles[] {
    const seen = new Map<string, LeafFiles>();
    for (const { files } of this.providers.values()) seen.set(`${files.cert}\0${files.key}`, files);
    return [...seen.values()];
  }

  /** Why each file of the last persist() could not be written ("<file>: <errno>"). */
  lastErrors: string[] = [];

  /** Serves a new leaf on every listener from the next handshake on. */
  serve(certPem: string, keyPem: string): void {
    const identity = { certificate: Buffer.from(certPem), privateKey: Buffer.from(keyPem) };
    for (const { provider } of this.providers.values()) provider.update(identity);
  }

  /**
   * Writes the leaf to the listeners' files (each atomically, key before certificate), so a restart
   * starts with it. Returns the files it could not write: a read-only TLS folder leaves the renewed
   * leaf in memory only, and the next start renews again.
   */
  persist(certPem: string, keyPem: string): string[] {
    const failed: string[] = [];
    this.lastErrors = [];
    for (const f of this.files()) {
      for (const [file, data, mode] of [
        [f.key, keyPem, 0o600],
        [f.cert, certPem, 0o644],
      ] as const) {
        const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`);
        try {
          fs.writeFileSync(tmp, data, { mode });
          fs.renameSync(tmp, file);
        } catch (err) {
          // The errno says why (EROFS under ProtectSystem=strict, EACCES for a root-owned folder).
          this.lastErrors.push(`${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
          try {
            fs.unlinkSync(tmp);
          } catch {
            /* not created, or not ours to remove */
          }
          failed.push(file);
        }
      }
    }
    // What is on disk now is what was served, unless writing failed: then the old files stay the
    // reference, so they are not mistaken for an operator's change and served again.
    for (const entry of this.providers.values()) {
      if (!failed.includes(entry.files.cert) && !failed.includes(entry.files.key)) {
        entry.onDisk = { cert: Buffer.from(certPem), key: Buffer.from(keyPem) };
      }
    }
    return failed;
  }

  /** Re-reads the files when they changed on disk (an operator replaced them); true when served anew. */
  reloadIfChanged(): boolean {
    let changed = false;
    for (const entry of this.providers.values()) {
      const { files, provider } = entry;
      let cert: Buffer;
      let key: Buffer;
      try {
        cert = fs.readFileSync(files.cert);
        key = fs.readFileSync(files.key);
      } catch {
        continue; // a file being replaced; the next look finds it
      }
      if (cert.equals(entry.onDisk.cert) && key.equals(entry.onDisk.key)) continue;
      try {
        if (!new X509Certificate(cert).checkPrivateKey(createPrivateKey(key))) continue; // half-written pair
      } catch {
        continue;
      }
      entry.onDisk = { cert, key };
      provider.update({ certificate: cert, privateKey: key });
      changed = true;
    }
    return changed;
  }
}
