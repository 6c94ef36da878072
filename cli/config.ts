// Where keeperctl keeps its clusters: $XDG_CONFIG_HOME/keeper (default ~/.config/keeper).
//   config.yml        clusters by name (url, pinned CA file) and the current one; no secrets
//   tokens/<cluster>  the operator token of each cluster, mode 0600 in a 0700 directory
// KEEPER_URL, KEEPER_TOKEN, KEEPER_CA and KEEPER_CLUSTER override the file for one command.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import yaml from 'js-yaml';
import { CliError, ExitCode } from './errors';
import type { Target } from './client';

export interface ClusterEntry {
  url: string;
  ca_file?: string;
}
export interface CliConfig {
  current?: string;
  clusters: Record<string, ClusterEntry>;
}

const NAME = /^[a-z0-9][a-z0-9_.-]{0,62}$/;

export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env['XDG_CONFIG_HOME'] || path.join(os.homedir(), '.config');
  return path.join(base, 'keeper');
}

const configFile = (dir: string) => path.join(dir, 'config.yml');
const tokenFile = (dir: string, cluster: string) => path.join(dir, 'tokens', cluster);

export function readConfig(dir = configDir()): CliConfig {
  const file = configFile(dir);
  if (!fs.existsSync(file)) return { clusters: {} };
  let doc: unknown;
  try {
    doc = yaml.load(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new CliError(
      ExitCode.Usage,
      `${file} is not valid YAML: ${(err as Error).message}`,
      'fix the file or remove it and log in again',
    );
  }
  const c = (doc ?? {}) as Partial<CliConfig>;
  if (typeof c !== 'object' || (c.clusters !== undefined && (typeof c.clusters !== 'object' || c.clusters === null))) {
    throw new CliError(
      ExitCode.Usage,
      `${file}: clusters must be a mapping of name to {url, ca_file}`,
      'fix the file or log in again',
    );
  }
  return { ...(c.current ? { current: c.current } : {}), clusters: c.clusters ?? {} };
}

/** Writes atomically: a crash leaves the old file or the new one, never half of one. */
function writeAtomic(file: string, content: string, mode: number): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, content, { mode });
  fs.renameSync(tmp, file);
}

export function checkClusterName(name: string): void {
  if (!NAME.test(name)) {
    throw new CliError(
      ExitCode.Usage,
      `cluster name ${JSON.stringify(name)} is not valid`,
      'use lower-case letters, digits, ".", "_" or "-" (at most 63)',
    );
  }
}

export function saveCluster(dir: string, name: string, entry: ClusterEntry, token: string): void {
  checkClusterName(name);
  const c = readConfig(dir);
  c.clusters[name] = entry;
  c.current ??= name;
  writeAtomic(tokenFile(dir, name), `${token}\n`, 0o600);
  fs.chmodSync(path.join(dir, 'tokens'), 0o700);
  writeAtomic(configFile(dir), yaml.dump(c), 0o600);
}

export function useCluster(dir: string, name: string): void {
  const c = readConfig(dir);
  if (!c.clusters[name])
    throw new CliError(
      ExitCode.NotFound,
      `no cluster named ${name}`,
      `known: ${Object.keys(c.clusters).join(', ') || 'none'}; add one with keeperctl login`,
    );
  c.current = name;
  writeAtomic(configFile(dir), yaml.dump(c), 0o600);
}

export function removeCluster(dir: string, name: string): void {
  const c = readConfig(dir);
  if (!c.clusters[name])
    throw new CliError(ExitCode.NotFound, `no cluster named ${name}`, 'keeperctl clusters lists them');
  delete c.clusters[name];
  if (c.current === name) delete c.current;
  fs.rmSync(tokenFile(dir, name), { force: true });
  writeAtomic(configFile(dir), yaml.dump(c), 0o600);
}

/** The cluster a command talks to: flags, then environment, then the config file's current cluster. */
export function resolveTarget(
  opts: { cluster?: string; url?: string; ca?: string; tokenFile?: string },
  env: NodeJS.ProcessEnv = process.env,
  dir = configDir(env),
): Target & { cluster?: string } {
  const url = opts.url ?? env['KEEPER_URL'];
  const caFile = opts.ca ?? env['KEEPER_CA'];
  const tokenFromFile = (f: string) => {
    try {
      return fs.readFileSync(f, 'utf8').trim();
    } catch (err) {
      throw new CliError(
        ExitCode.Auth,
        `cannot read the token file ${f}: ${(err as Error).message}`,
        'log in again with keeperctl login',
      );
    }
  };
  let token = opts.tokenFile ? tokenFromFile(opts.tokenFile) : env['KEEPER_TOKEN'] || undefined;
  if (url) return { url, ...(token ? { token } : {}), ...(caFile ? { caFile } : {}) };
  const c = readConfig(dir);
  const name = opts.cluster ?? env['KEEPER_CLUSTER'] ?? c.current;
  if (!name) {
    throw new CliError(
      ExitCode.Usage,
      'no cluster chosen',
      'log in first: keeperctl login <name> --url <url> --token-file <file> (or set KEEPER_URL and KEEPER_TOKEN)',
    );
  }
  const entry = c.clusters[name];
  if (!entry)
    throw new CliError(
      ExitCode.Usage,
      `no cluster named ${name} in ${configFile(dir)}`,
      'keeperctl clusters lists them; keeperctl login adds one',
    );
  if (!token) {
    const f = tokenFile(dir, name);
    if (fs.existsSync(f)) {
      const mode = fs.statSync(f).mode & 0o077;
      if (mode !== 0)
        throw new CliError(
          ExitCode.Auth,
          `${f} is readable by others (mode ${(fs.statSync(f).mode & 0o777).toString(8)})`,
          `chmod 600 ${f}`,
        );
      token = tokenFromFile(f);
    }
  }
  const ca = caFile ?? entry.ca_file;
  return { cluster: name, url: entry.url, ...(token ? { token } : {}), ...(ca ? { caFile: ca } : {}) };
}
