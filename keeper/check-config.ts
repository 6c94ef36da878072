// `keeper check-config`: what a start would check, without starting. Beyond the schema
// (platform/config/load.ts) it checks the files keeper.yml names, as the process that runs it
// (the guide runs it as the `keeper` user): each exists and is readable, the AppRole secret_id files
// are their owner's alone (0400, the spec's mode), private keys are not readable by every user, and
// each certificate matches its key. A start found these one at a time, at the first use; an operator
// gets them all at once, each naming the key and the fix (issue 37 row 10).
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { KeeperConfig } from '../platform/config/types';

interface Named {
  key: string;
  file: string;
}

function readable(f: Named, problems: string[]): Buffer | undefined {
  try {
    return fs.readFileSync(f.file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'does not exist'
        : code === 'EACCES'
          ? "is not readable by this user (run check-config as the keeper's user)"
          : `cannot be read (${code})`;
    problems.push(`${f.key}: ${f.file} ${why}; fix: install the file there (docs/install.md) or correct ${f.key}`);
    return undefined;
  }
}

const modeOf = (file: string) => fs.statSync(file).mode & 0o777;
const octal = (mode: number) => mode.toString(8).padStart(4, '0');

/** The cert and key of one TLS block: both readable, the key not world-readable, the pair matching. */
function checkPair(cert: Named, key: Named, problems: string[]): void {
  const certPem = readable(cert, problems);
  const keyPem = readable(key, problems);
  if (keyPem && (modeOf(key.file) & 0o007) !== 0) {
    problems.push(
      `${key.key}: ${key.file} has mode ${octal(modeOf(key.file))}, readable by every user; fix: chown root:keeper ${key.file} && chmod 0640 ${key.file}`,
    );
  }
  if (!certPem || !keyPem) return;
  let x509: crypto.X509Certificate;
  try {
    x509 = new crypto.X509Certificate(certPem);
  } catch {
    problems.push(`${cert.key}: ${cert.file} is not a PEM certificate`);
    return;
  }
  let priv: crypto.KeyObject;
  try {
    priv = crypto.createPrivateKey(keyPem);
  } catch {
    problems.push(`${key.key}: ${key.file} is not a PEM private key`);
    return;
  }
  if (!x509.checkPrivateKey(priv))
    problems.push(
      `${cert.key}: ${cert.file} does not match its key ${key.file} (${key.key}); fix: install the certificate issued for that key`,
    );
  if (new Date(x509.validTo).getTime() < Date.now())
    problems.push(
      `${cert.key}: ${cert.file} expired on ${new Date(x509.validTo).toISOString()}; fix: install a renewed certificate`,
    );
}

function checkCa(ca: Named, problems: string[]): void {
  const pem = readable(ca, problems);
  if (!pem) return;
  try {
    new crypto.X509Certificate(pem);
  } catch {
    problems.push(`${ca.key}: ${ca.file} is not a PEM certificate`);
  }
}

function checkSecretId(key: string, file: string | undefined, problems: string[]): void {
  if (!file) return;
  if (!readable({ key, file }, problems)) return;
  const mode = modeOf(file);
  if ((mode & 0o377) !== 0) {
    problems.push(
      `${key}: ${file} has mode ${octal(mode)}: a secret_id file must be readable by its owner alone (mode 0400); fix: chown <the keeper's user> ${file} && chmod 0400 ${file}`,
    );
  }
}

/**
 * With server_leaf the keeper writes each renewed leaf over its files (atomically: a temporary file
 * beside it, then a rename), so their folder must be writable by the keeper's user, and under
 * keeper.service only /var/lib/keeper is (ProtectSystem=strict). Otherwise every start issued a new
 * leaf and the files stayed stale (issue 37 row 5).
 */
function checkLeafWritable(config: KeeperConfig, problems: string[]): void {
  const g = config.listen.grpc;
  const seen = new Set<string>();
  for (const [key, file] of [
    ['listen.grpc.bootstrap.tls.cert', g.bootstrap.tls.cert],
    ['listen.grpc.bootstrap.tls.key', g.bootstrap.tls.key],
    ['listen.grpc.event_stream.tls.cert', g.event_stream.tls.cert],
    ['listen.grpc.event_stream.tls.key', g.event_stream.tls.key],
  ] as const) {
    const dir = path.dirname(file);
    if (seen.has(dir)) continue;
    seen.add(dir);
    try {
      fs.accessSync(dir, fs.constants.W_OK);
    } catch (err) {
      problems.push(
        `${key}: secretstore.server_leaf renews the leaf into ${dir}, which this user cannot write (${(err as NodeJS.ErrnoException).code}); fix: keep the leaf in the keeper's state folder (/var/lib/keeper/tls, owned by keeper) and point the listeners' tls.cert and tls.key there (docs/install.md)`,
      );
    }
  }
}

/** Every problem with the files `config` names; empty when a start would find them all in order. */
export function checkConfigFiles(config: KeeperConfig): string[] {
  const problems: string[] = [];
  const g = config.listen.grpc;
  // With secretstore.server_leaf the keeper issues its own leaf at start: the files may not exist yet.
  const leafIssued = config.secretstore.server_leaf !== undefined;
  const bootstrap = {
    cert: { key: 'listen.grpc.bootstrap.tls.cert', file: g.bootstrap.tls.cert },
    key: { key: 'listen.grpc.bootstrap.tls.key', file: g.bootstrap.tls.key },
  };
  const stream = {
    cert: { key: 'listen.grpc.event_stream.tls.cert', file: g.event_stream.tls.cert },
    key: { key: 'listen.grpc.event_stream.tls.key', file: g.event_stream.tls.key },
  };
  for (const pair of [bootstrap, stream]) {
    if (leafIssued && !fs.existsSync(pair.cert.file)) continue;
    // The same files under both listeners (the usual case) are reported once.
    if (pair === stream && stream.cert.file === bootstrap.cert.file && stream.key.file === bootstrap.key.file) continue;
    checkPair(pair.cert, pair.key, problems);
  }
  checkCa({ key: 'listen.grpc.event_stream.tls.ca', file: g.event_stream.tls.ca }, problems);
  if (g.bootstrap.tls.ca) checkCa({ key: 'listen.grpc.bootstrap.tls.ca', file: g.bootstrap.tls.ca }, problems);
  const t = config.temporal.tls;
  if (t) {
    checkCa({ key: 'temporal.tls.ca', file: t.ca }, problems);
    checkPair({ key: 'temporal.tls.cert', file: t.cert }, { key: 'temporal.tls.key', file: t.key }, problems);
  }
  if (config.secretstore.ca_file) checkCa({ key: 'secretstore.ca_file', file: config.secretstore.ca_file }, problems);
  if (leafIssued) checkLeafWritable(config, problems);
  checkSecretId('secretstore.auth.secret_id_file', config.secretstore.auth?.secret_id_file, problems);
  checkSecretId('secretstore.scenario_auth.secret_id_file', config.secretstore.scenario_auth.secret_id_file, problems);
  return problems;
}
