// Real OpenSSH servers for the push-mode tests: each `sshd` runs in its own UTS namespace with the
// host name it is given (its SID, or on purpose another one), its own host key, and one authorized
// key. They listen on free 127.0.0.1 ports and log to a file the test can read on failure.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { freePort } from '../support/ports';

export interface KeyPair {
  privateKey: string;
  publicKey: string;
}

/**
 * The test user the keeper logs in as: uid 0 (the steps write under root-owned folders and the
 * ledger as the soul package's root service would), but its own entry with /bin/sh as its shell and
 * an empty home. Logging in as `root` ran this machine's /root/.bashrc for every SSH command (bash
 * reads it when started by sshd; here it runs pyenv's init: 0.7 s per command, measured), so the
 * tests and bench/ssh measured a developer's shell set-up rather than Keeper; a host's real login
 * user is the operator's choice (docs/ssh.md).
 */
export const TEST_USER = 'soul-push-test';
const TEST_HOME = '/var/lib/soul-push-test';
let userReady = false;

/** Creates the test user once per machine (useradd: uid 0 shared, no files copied into its home, no
 *  password: `*` rather than useradd's `!`, which sshd treats as a locked account). */
export function ensureTestUser(): void {
  if (userReady) return;
  fs.mkdirSync(TEST_HOME, { recursive: true, mode: 0o700 });
  try {
    execFileSync('id', ['-u', TEST_USER], { stdio: 'pipe' });
  } catch {
    try {
      execFileSync(
        'useradd',
        [
          '-o',
          '-u',
          '0',
          '-g',
          '0',
          '-M',
          '-p',
          '*',
          '-d',
          TEST_HOME,
          '-s',
          '/bin/sh',
          '-c',
          'Keeper SSH push tests',
          TEST_USER,
        ],
        { stdio: 'pipe' },
      );
    } catch (err) {
      // Another test process created it meanwhile: useradd exits 9 (the name is taken).
      if ((err as { status?: number }).status !== 9) throw err;
    }
  }
  userReady = true;
}

/** A new ed25519 key pair in OpenSSH form (what an operator stores in the secrets store). */
export function keygen(dir: string, name: string): KeyPair {
  const file = path.join(dir, name);
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', name, '-f', file], { stdio: 'pipe' });
  return { privateKey: fs.readFileSync(file, 'utf8'), publicKey: fs.readFileSync(`${file}.pub`, 'utf8').trim() };
}

export interface TestSshd {
  hostname: string;
  port: number;
  dir: string;
  hostKey: KeyPair;
  child: ChildProcess;
  stop(): Promise<void>;
  log(): string;
}

function listening(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const attempt = () => {
      const s = net.connect({ port, host: '127.0.0.1' });
      s.once('connect', () => {
        s.destroy();
        resolve();
      });
      s.once('error', () => {
        s.destroy();
        if (Date.now() > deadline) reject(new Error(`sshd did not listen on 127.0.0.1:${port} within ${timeoutMs} ms`));
        else setTimeout(attempt, 50);
      });
    };
    attempt();
  });
}

/** Starts `sshd -D` as `hostname` (UTS namespace), authorizing `authorized` for TEST_USER. */
export async function startSshd(root: string, hostname: string, authorized: string): Promise<TestSshd> {
  ensureTestUser();
  const dir = fs.mkdtempSync(path.join(root, 'sshd-'));
  const hostKey = keygen(dir, 'host_ed25519');
  fs.writeFileSync(path.join(dir, 'authorized_keys'), `${authorized}\n`, { mode: 0o600 });
  const port = await freePort();
  const config = path.join(dir, 'sshd_config');
  fs.writeFileSync(
    config,
    [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${path.join(dir, 'host_ed25519')}`,
      `AuthorizedKeysFile ${path.join(dir, 'authorized_keys')}`,
      `PidFile ${path.join(dir, 'sshd.pid')}`,
      'PermitRootLogin prohibit-password',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'UsePAM no',
      'StrictModes no',
      'MaxSessions 32',
      'MaxStartups 100:30:200',
      'LogLevel VERBOSE',
      '',
    ].join('\n'),
  );
  fs.mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  const logFile = path.join(dir, 'sshd.log');
  // $0 is the host name, $1 the config and $2 the log: no value is parsed by the shell.
  const child = spawn(
    'unshare',
    ['--uts', 'sh', '-c', 'hostname "$0" && exec /usr/sbin/sshd -D -f "$1" -E "$2"', hostname, config, logFile],
    { stdio: 'ignore' },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const log = () => {
    try {
      return fs.readFileSync(logFile, 'utf8');
    } catch {
      return '';
    }
  };
  try {
    await listening(port, 10_000);
  } catch (err) {
    child.kill('SIGKILL');
    (err as Error).message += `\n--- sshd log ---\n${log().slice(-2000)}`;
    throw err;
  }
  return {
    hostname,
    port,
    dir,
    hostKey,
    child,
    log,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
