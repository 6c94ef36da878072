// The keeper's client for the secrets/PKI store: logs in (AppRole, or a dev token), keeps its token
// renewed while the process runs, resolves `secretstore:<path>` references on KV v1 or v2 (detected
// per mount), and signs soul CSRs with the PKI role. Resolved values are cached so established work
// keeps going through a store outage (interface spec 7).
import fs from 'node:fs';
import tls from 'node:tls';
import vaultFactory from 'node-vault';
import type { Logger } from '../common/logger';
import { silentLogger } from '../common/logger';
import { SecretStoreError, classify } from './errors';

export interface SecretStoreOptions {
  addr: string;
  /** PEM CA(s) trusted for an https store, beside Node's bundled public CAs (secretstore.ca_file). */
  ca_file?: string;
  token?: string;
  auth?: { method: 'approle'; role_id: string; secret_id_file?: string; secret_id_env?: string };
  /** The config key of `auth`, for error messages: `secretstore.auth` (default) or `secretstore.scenario_auth`. */
  auth_key?: string;
  pki_mount: string;
  pki_role: string;
  timeout_ms?: number;
  logger?: Logger;
}

export interface SignedCertificate {
  certificate: string;
  issuingCa: string;
  caChain: string[];
  serialNumber: string;
}
export interface IssuedCertificate extends SignedCertificate {
  privateKey: string;
}
export interface IssueRequest {
  role: string;
  commonName: string;
  altNames: string[];
  ipSans: string[];
  ttl: string;
}

const REF = /^secretstore:([A-Za-z0-9_./-]+)$/;

export function parseRef(ref: string): string {
  const m = REF.exec(ref);
  if (!m || m[1]!.includes('..')) {
    throw new SecretStoreError(
      'bad_reference',
      `"${ref}" is not a secrets-store reference; write secretstore:<path>, e.g. secretstore:secret/keeper`,
    );
  }
  return m[1]!.replace(/^\/+|\/+$/g, '');
}

/** secretstore.ca_file's certificates added to Node's public CAs (a `ca` option alone replaces them). */
function storeCa(file: string): string[] {
  let pem: string;
  try {
    pem = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new SecretStoreError(
      'login_failed',
      `secretstore.ca_file: ${file} cannot be read (${(err as NodeJS.ErrnoException).code}); fix: install the store's CA there or correct secretstore.ca_file`,
    );
  }
  return [...tls.rootCertificates, pem];
}

export class SecretStore {
  private readonly vault: ReturnType<typeof vaultFactory>;
  private readonly log: Logger;
  private readonly kvVersion = new Map<string, { mount: string; version: 1 | 2 }>();
  private readonly cache = new Map<string, Record<string, unknown>>();
  private renewTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly opts: SecretStoreOptions) {
    this.log = opts.logger ?? silentLogger;
    this.vault = vaultFactory({
      apiVersion: 'v1',
      endpoint: opts.addr,
      requestOptions: { timeout: opts.timeout_ms ?? 5000, ...(opts.ca_file ? { ca: storeCa(opts.ca_file) } : {}) },
      ...(opts.token ? { token: opts.token } : {}),
    });
  }

  /** Logs in with AppRole (or keeps the dev token) and schedules renewal. */
  async login(): Promise<void> {
    if (!this.opts.auth) {
      if (!this.opts.token)
        throw new SecretStoreError('login_failed', 'no secretstore.auth and no secretstore.token configured');
      return;
    }
    const secretId = this.readSecretId();
    let res: { auth?: { client_token: string; lease_duration: number; renewable: boolean } };
    try {
      res = await this.vault.approleLogin({ role_id: this.opts.auth.role_id, secret_id: secretId });
    } catch (err) {
      const c = classify(err, 'logging in with AppRole', this.opts.addr);
      if (c.kind === 'unreachable') throw c;
      throw new SecretStoreError(
        'login_failed',
        `AppRole login as role_id "${this.opts.auth.role_id}" was refused; check ${this.authKey}.role_id and the secret_id (a secret_id can be regenerated with the store's CLI)`,
      );
    }
    if (!res.auth) throw new SecretStoreError('login_failed', 'AppRole login returned no token');
    this.vault.token = res.auth.client_token;
    this.scheduleRenewal(res.auth.lease_duration, res.auth.renewable);
  }

  private get authKey(): string {
    return this.opts.auth_key ?? 'secretstore.auth';
  }

  private readSecretId(): string {
    const a = this.opts.auth!;
    if (a.secret_id_env) {
      const v = process.env[a.secret_id_env];
      if (!v)
        throw new SecretStoreError(
          'login_failed',
          `environment variable ${a.secret_id_env} (${this.authKey}.secret_id_env) is empty`,
        );
      return v.trim();
    }
    const file = a.secret_id_file!;
    let fd: number;
    try {
      fd = fs.openSync(file, 'r');
    } catch (err) {
      throw new SecretStoreError(
        'login_failed',
        `cannot read ${this.authKey}.secret_id_file ${file} (${(err as NodeJS.ErrnoException).code}); write the AppRole secret_id there, owned by the keeper's user, mode 0400`,
      );
    }
    try {
      // The spec's rule for credential files: readable by their owner alone. Checked on the open file
      // (fstat), so the mode judged is the mode of the bytes read.
      const mode = fs.fstatSync(fd).mode & 0o777;
      if ((mode & 0o377) !== 0) {
        throw new SecretStoreError(
          'refused',
          `${this.authKey}.secret_id_file ${file} has mode ${mode.toString(8).padStart(4, '0')}: a secret_id file must be readable by its owner alone (mode 0400); ` +
            `fix: chown <the keeper's user> ${file} && chmod 0400 ${file}`,
        );
      }
      return fs.readFileSync(fd, 'utf8').trim();
    } finally {
      fs.closeSync(fd);
    }
  }

  // Renew at two thirds of the TTL; when renewal is refused (max TTL reached) or fails, log in again.
  // A store outage is retried every few seconds; the cached secrets keep the process working meanwhile.
  private scheduleRenewal(ttlSeconds: number, renewable: boolean, retryMs?: number): void {
    if (this.closed || ttlSeconds <= 0) return;
    const delay = retryMs ?? Math.max(1000, Math.floor((ttlSeconds * 1000 * 2) / 3));
    clearTimeout(this.renewTimer);
    this.renewTimer = setTimeout(() => void this.renew(renewable), delay);
    this.renewTimer.unref();
  }

  private async renew(renewable: boolean): Promise<void> {
    try {
      if (renewable) {
        const res = await this.vault.tokenRenewSelf();
        const ttl: number = res.auth?.lease_duration ?? 0;
        if (ttl > 5) {
          this.log.debug('secrets store token renewed', { ttl_seconds: ttl });
          this.scheduleRenewal(ttl, res.auth?.renewable ?? true);
          return;
        }
      }
      await this.login();
      this.log.info('secrets store token re-established by AppRole login');
    } catch (err) {
      this.log.warn('secrets store token renewal failed; retrying', {
        error: classify(err, 'renewing the token', this.opts.addr).message,
      });
      this.scheduleRenewal(60, renewable, 3000);
    }
  }

  /**
   * Runs a store call; on a 403 with AppRole auth, logs in once and runs it again. A store that came
   * back without the keeper's token (a restart without persistent storage, a revoked token) answers
   * 403 to everything, and the next scheduled renewal may be most of an hour away: spec section 7,
   * "after recovery ... the server re-establishes its token" (test/faults/secretstore.test.ts). A
   * real policy denial is 403 again after the login and is reported as before.
   */
  private async withToken<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      if (!this.opts.auth || classify(err, '', this.opts.addr).kind !== 'denied') throw err;
      await this.login();
      this.log.info('secrets store token re-established by AppRole login after a 403');
      return call();
    }
  }

  /** The token's remaining TTL in seconds, for tests and diagnostics. */
  async tokenTtl(): Promise<number> {
    const res = await this.vault.tokenLookupSelf();
    return res.data.ttl as number;
  }

  private async detectKv(path: string): Promise<{ mount: string; version: 1 | 2 }> {
    const known = [...this.kvVersion.entries()].find(([m]) => path.startsWith(m));
    if (known) return known[1];
    let res: { data?: { path?: string; type?: string; options?: { version?: string } } };
    try {
      res = await this.withToken(() => this.vault.read(`sys/internal/ui/mounts/${path}`));
    } catch (err) {
      throw classify(err, `looking up the mount of ${path}`, this.opts.addr);
    }
    const mount = res.data?.path ?? '';
    if (!mount || (res.data?.type !== 'kv' && res.data?.type !== 'generic')) {
      throw new SecretStoreError(
        'not_found',
        `${path} is not on a KV secrets engine (mount "${mount || 'none'}"); check the reference`,
      );
    }
    const info = { mount, version: (res.data?.options?.version === '2' ? 2 : 1) as 1 | 2 };
    this.kvVersion.set(mount, info);
    return info;
  }

  /** Reads a KV secret (all fields). KV v1 and v2 are handled alike. */
  async readSecret(path: string): Promise<Record<string, unknown>> {
    const fields = await this.readFields(path);
    this.cache.set(path, fields);
    return fields;
  }

  /** The API path of a KV secret: `<mount>data/<rest>` on KV v2, the path itself on KV v1. */
  async apiPathOf(path: string): Promise<string> {
    const { mount, version } = await this.detectKv(path);
    return version === 2 ? `${mount}data/${path.slice(mount.length)}` : path;
  }

  /**
   * Whether this client's token may read the API path `apiPath` (found by another client, see
   * apiPathOf), asked of the store itself: 403 is no; an answer or a 404 (allowed, nothing there)
   * is yes. The keeper refuses to start when its scenario token can read the keeper's own secrets.
   */
  async mayRead(apiPath: string): Promise<boolean> {
    try {
      await this.vault.read(apiPath);
      return true;
    } catch (err) {
      const c = classify(err, `reading ${apiPath}`, this.opts.addr);
      if (c.kind === 'denied') return false;
      if (c.kind === 'not_found') return true;
      throw c;
    }
  }

  /** Reads a KV secret without keeping it: scenario secrets are read at each dispatch, never cached. */
  async readFields(path: string): Promise<Record<string, unknown>> {
    const { mount, version } = await this.detectKv(path);
    const apiPath = version === 2 ? `${mount}data/${path.slice(mount.length)}` : path;
    let res: { data?: Record<string, unknown> & { data?: Record<string, unknown> } };
    try {
      res = await this.withToken(() => this.vault.read(apiPath));
    } catch (err) {
      throw classify(err, `reading ${path}`, this.opts.addr);
    }
    return (version === 2 ? res.data?.data : res.data) ?? {};
  }

  /** Writes (replaces) a KV secret's fields, on KV v1 or v2. Used for values given to secret inputs. */
  async writeFields(path: string, fields: Record<string, string>): Promise<void> {
    const { mount, version } = await this.detectKv(path);
    try {
      if (version === 2)
        await this.withToken(() => this.vault.write(`${mount}data/${path.slice(mount.length)}`, { data: fields }));
      else await this.withToken(() => this.vault.write(path, fields));
    } catch (err) {
      throw classify(err, `writing ${path}`, this.opts.addr);
    }
  }

  /** Deletes a KV secret with all its versions (KV v2: its metadata), on KV v1 or v2. */
  async deleteSecret(path: string): Promise<void> {
    const { mount, version } = await this.detectKv(path);
    try {
      await this.withToken(() =>
        this.vault.delete(version === 2 ? `${mount}metadata/${path.slice(mount.length)}` : path),
      );
    } catch (err) {
      throw classify(err, `deleting ${path}`, this.opts.addr);
    }
  }

  /** The keys directly below `folder` (names ending in `/` are folders); none when it is empty. */
  async listKeys(folder: string): Promise<string[]> {
    const dir = folder.endsWith('/') ? folder : `${folder}/`;
    const { mount, version } = await this.detectKv(dir);
    try {
      const res = await this.withToken(() =>
        this.vault.list(version === 2 ? `${mount}metadata/${dir.slice(mount.length)}` : dir),
      );
      return (res.data?.keys as string[] | undefined) ?? [];
    } catch (err) {
      const c = classify(err, `listing ${dir}`, this.opts.addr);
      if (c.kind === 'not_found') return [];
      throw c;
    }
  }

  /**
   * Resolves `secretstore:<path>` to the value of `field`. With `useCache`, a value read before is
   * returned without asking the store (for paths that must survive an outage).
   */
  async resolveRef(ref: string, field: string, opts: { useCache?: boolean } = {}): Promise<string> {
    const path = parseRef(ref);
    const fields = (opts.useCache && this.cache.get(path)) || (await this.readSecret(path));
    const value = fields[field];
    if (typeof value !== 'string' || value === '') {
      throw new SecretStoreError(
        'missing_field',
        `the secret at ${path} has no field "${field}"; write it with the store's CLI (kv put ${path} ${field}=...)`,
      );
    }
    return value;
  }

  /** Signs a CSR with the PKI role; the names are given by the caller, never taken from the CSR. */
  async signCsr(csrPem: string, commonName: string, ttl = '720h'): Promise<SignedCertificate> {
    let res: { data: { certificate: string; issuing_ca: string; ca_chain?: string[]; serial_number: string } };
    try {
      res = await this.withToken(() =>
        this.vault.write(`${this.opts.pki_mount}/sign/${this.opts.pki_role}`, {
          csr: csrPem,
          common_name: commonName,
          alt_names: commonName,
          exclude_cn_from_sans: false,
          ttl,
          format: 'pem',
        }),
      );
    } catch (err) {
      throw classify(err, `signing a certificate for ${commonName}`, this.opts.addr);
    }
    return {
      certificate: res.data.certificate,
      issuingCa: res.data.issuing_ca,
      caChain: res.data.ca_chain ?? [res.data.issuing_ca],
      serialNumber: res.data.serial_number,
    };
  }

  /**
   * Issues a certificate and its key from `role` (the store makes the key): the keeper's own server
   * leaf. Only the keeper's listeners use it; the key never leaves this process and its files.
   */
  async issueCertificate(req: IssueRequest): Promise<IssuedCertificate> {
    let res: {
      data: {
        certificate: string;
        issuing_ca: string;
        ca_chain?: string[];
        serial_number: string;
        private_key: string;
      };
    };
    try {
      res = await this.vault.write(`${this.opts.pki_mount}/issue/${req.role}`, {
        common_name: req.commonName,
        alt_names: req.altNames.join(','),
        ip_sans: req.ipSans.join(','),
        ttl: req.ttl,
        format: 'pem',
      });
    } catch (err) {
      throw classify(err, `issuing the keeper's certificate ${req.commonName} from role ${req.role}`, this.opts.addr);
    }
    return {
      certificate: res.data.certificate,
      issuingCa: res.data.issuing_ca,
      caChain: res.data.ca_chain ?? [res.data.issuing_ca],
      serialNumber: res.data.serial_number,
      privateKey: res.data.private_key,
    };
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.renewTimer);
  }
}

/** Builds the client from the keeper config's secretstore block and logs in. */
export async function connectSecretStore(opts: SecretStoreOptions): Promise<SecretStore> {
  const store = new SecretStore(opts);
  await store.login();
  return store;
}
