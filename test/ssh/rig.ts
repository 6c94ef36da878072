// A keeper with SSH hosts for the push-mode tests: the keeper (own database, queue, ports) with its
// `ssh` configuration pointing `soul_command` at this checkout's built soul (the test hosts are
// sshd instances on this machine, so the soul's dist is there), a client key pair whose private half
// is in the secrets store below the keeper's readable prefix, and helpers that keep every API answer
// and log line for the canary checks.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { createLogger } from '../../common/logger';
import { startTestKeeper, type TestKeeper } from '../support/keeper';
import { repoRoot } from '../support/repo';
import { deleteSecret, putSecret } from '../support/secretstore';
import { api as rawApi, uniqueSid } from '../agents/harness';
import { keygen, startSshd, type KeyPair, type TestSshd, TEST_USER } from './sshd';

export interface SshRig {
  k: TestKeeper;
  root: string;
  client: KeyPair;
  /** `secretstore:<path>#private_key` of the client key. */
  keyRef: string;
  logs: string[];
  answers: string[];
  api(method: string, p: string, body?: unknown): Promise<{ status: number; body: any }>;
  /** Starts an sshd as `hostname` authorizing the client key (or `authorized`), and registers it as `sid`. */
  host(opts: {
    sid?: string;
    hostname?: string;
    covens: string[];
    authorized?: string;
    hostKey?: string;
    credentialRef?: string;
  }): Promise<{ sid: string; sshd: TestSshd }>;
  stop(): Promise<void>;
}

export async function startSshRig(
  root: string,
  keeperOpts: { mutateSsh?: Record<string, unknown> } = {},
): Promise<SshRig> {
  const client = keygen(root, 'client');
  const secretName = `keeper/services/ssh-test/t-${randomBytes(4).toString('hex')}`;
  const keyRef = `${await putSecret('secret', secretName, { private_key: client.privateKey })}#private_key`;
  const logs: string[] = [];
  const answers: string[] = [];
  const k = await startTestKeeper({
    log: createLogger({
      level: 'debug',
      write: (l) => {
        logs.push(l);
      },
    }),
    mutate: (doc) => {
      doc.ssh = {
        soul_command: `${process.execPath} ${path.join(repoRoot(), 'bin', 'soul')}`,
        state_dir: path.join(root, 'ledgers'),
        connect_timeout: '5s',
        command_timeout: '20s',
        ...keeperOpts.mutateSsh,
      };
    },
  });
  const sshds: TestSshd[] = [];
  const api = async (method: string, p: string, body?: unknown) => {
    const r = await rawApi(k, method, p, body);
    answers.push(JSON.stringify(r.body ?? null));
    return r;
  };
  return {
    k,
    root,
    client,
    keyRef,
    logs,
    answers,
    api,
    async host(o) {
      const sid = o.sid ?? uniqueSid('ssh');
      const sshd = await startSshd(root, o.hostname ?? sid, o.authorized ?? client.publicKey);
      sshds.push(sshd);
      const r = await api('POST', '/v1/souls', {
        sid,
        transport: 'ssh',
        covens: o.covens,
        ssh: {
          address: '127.0.0.1',
          port: sshd.port,
          user: TEST_USER,
          host_key: o.hostKey ?? sshd.hostKey.publicKey,
          credential_ref: o.credentialRef ?? keyRef,
        },
      });
      if (r.status !== 201) throw new Error(`POST /v1/souls (ssh): ${r.status} ${JSON.stringify(r.body)}`);
      return { sid, sshd };
    },
    async stop() {
      await Promise.all(sshds.map((s) => s.stop()));
      await k.stop();
      await deleteSecret('secret', secretName).catch(() => undefined);
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
}
