// One SSH connection to one host (ssh2): the pinned host key checked during key exchange (a
// mismatch ends the handshake before authentication, so nothing runs), public-key authentication
// with the private key read from the secrets store by the caller, and commands run as exec
// channels multiplexed over the connection. Every failure is an SshFailure whose reason an
// operator can act on and which never contains key material.
import { createHash } from 'node:crypto';
import { Client, type ClientChannel } from 'ssh2';
import { hostKeyText, parseHostKey, sameHostKey } from './host-key';

export class SshFailure extends Error {
  override readonly name = 'SshFailure';
  constructor(readonly reason: string) {
    super(reason);
  }
}

export interface SshEndpoint {
  address: string;
  port: number;
  user: string;
  host_key: string | null;
}

export interface SshConnection {
  /** The host key the server presented, as `<type> <base64>`. */
  readonly seenHostKey: string;
  /** `label` names the command in a timeout's reason (the command line itself may be long). */
  exec(
    command: string,
    opts: { timeoutMs: number; label: string; stdin?: string },
  ): Promise<{ code: number | null; stdout: string; stderr: string }>;
  /** A long-running command: its channel, for a line protocol (the caller ends it). */
  stream(command: string): Promise<ClientChannel>;
  close(): void;
}

const fingerprint = (blob: Buffer) => `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;

/** Why a connection attempt failed, in the operator's terms (the library's text can be cryptic). */
function describe(err: Error & { level?: string; code?: string }, ep: SshEndpoint, timeoutMs: number): string {
  const at = `${ep.address}:${ep.port}`;
  if (err.code === 'ECONNREFUSED') return `connection refused at ${at} (is sshd running?)`;
  if (err.code === 'EHOSTUNREACH' || err.code === 'ENETUNREACH') return `no route to ${at}`;
  if (err.code === 'ENOTFOUND') return `cannot resolve ${ep.address}`;
  if (/timed out/i.test(err.message) || err.code === 'ETIMEDOUT')
    return `no SSH answer from ${at} within ${timeoutMs} ms`;
  if (err.level === 'client-authentication')
    return `authentication failed for user ${ep.user} at ${at}: the key named by credential_ref is not accepted`;
  if (/privateKey/i.test(err.message)) return 'the secret named by credential_ref is not a usable OpenSSH private key';
  return `SSH connection to ${at} failed: ${err.message}`;
}

export function connectSsh(ep: SshEndpoint, privateKey: string, opts: { timeoutMs: number }): Promise<SshConnection> {
  const pinned = ep.host_key === null ? null : parseHostKey(ep.host_key);
  if (pinned !== null && 'error' in pinned)
    return Promise.reject(new SshFailure(`the registered host key is not usable: ${pinned.error}`));
  const client = new Client();
  let seen: Buffer | null = null;
  let keyChanged = false;
  return new Promise<SshConnection>((resolve, reject) => {
    let settled = false;
    const fail = (reason: string) => {
      if (settled) return;
      settled = true;
      client.end();
      reject(new SshFailure(reason));
    };
    client.once('ready', () => {
      settled = true;
      resolve(wrap(client, hostKeyText(seen!)));
    });
    client.on('error', (err) => {
      if (keyChanged) {
        fail(
          `host key changed: ${ep.address}:${ep.port} presented ${fingerprint(seen!)}, the registration pins ${fingerprint((pinned as { blob: Buffer }).blob)}`,
        );
      } else fail(describe(err, ep, opts.timeoutMs));
    });
    client.once('close', () => fail(`the connection to ${ep.address}:${ep.port} closed during the handshake`));
    try {
      client.connect({
        host: ep.address,
        port: ep.port,
        username: ep.user,
        privateKey,
        readyTimeout: opts.timeoutMs,
        // No agent, no password, no keyboard-interactive: the registered key or nothing.
        authHandler: ['publickey'],
        hostVerifier: (key: Buffer) => {
          seen = key;
          if (pinned === null) return true; // trust on first use, asked for at registration and recorded
          keyChanged = !sameHostKey(pinned.blob, key);
          return !keyChanged;
        },
      });
    } catch (err) {
      fail(describe(err as Error, ep, opts.timeoutMs));
    }
  });
}

function wrap(client: Client, seenHostKey: string): SshConnection {
  const open = (command: string) =>
    new Promise<ClientChannel>((resolve, reject) => {
      client.exec(command, (err, ch) =>
        err ? reject(new SshFailure(`cannot run a command over SSH: ${err.message}`)) : resolve(ch),
      );
    });
  return {
    seenHostKey,
    stream: open,
    async exec(command, { timeoutMs, label, stdin }) {
      const ch = await open(command);
      return new Promise((resolve, reject) => {
        let stdout = '';
        let stderr = '';
        const timer = setTimeout(() => {
          ch.close();
          reject(new SshFailure(`${label} gave no answer within ${timeoutMs} ms (ssh.command_timeout)`));
        }, timeoutMs);
        ch.on('data', (d: Buffer) => {
          stdout += d.toString('utf8');
        });
        ch.stderr.on('data', (d: Buffer) => {
          stderr += d.toString('utf8');
        });
        ch.once('close', (code: number | null) => {
          clearTimeout(timer);
          resolve({ code, stdout, stderr });
        });
        ch.end(stdin);
      });
    },
    close: () => client.end(),
  };
}
