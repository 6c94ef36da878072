// The SSH transport (push mode, docs/ssh.md): reaches a host registered with transport `ssh`, for
// one dispatch or one check. Reaching a host is always the same four things, in order, and any
// failure stops there with nothing run on the host:
//   1. the private key is read from the secrets store (credential_ref), kept only in this call;
//   2. the connection is made with the pinned host key (a different key: "host key changed"); with
//      trust on first use and no key pinned yet, the key seen is pinned once authentication succeeded;
//   3. the host's FQDN must be the SID (a host answering under another name is not it), by the rule
//      the agent uses (ARCHITECTURE 4): the hostname when it has a dot, else `hostname -f`;
//   4. the soul's facts come back (`soul facts`, or the hello of `soul apply`) and are recorded.
// Steps then go to one `soul apply` per host per dispatch, over the same connection: the soul's
// own state modules and ledger apply them. At most `maxSessions` connections are open at once
// per keeper; further hosts wait for a slot.
import type { Knex } from 'knex';
import type { Logger } from '../../common/logger';
import { parseReference } from '../../common/secret';
import { credentialRefProblem, type ScenarioSecrets } from '../../secrets/scenario';
import { pinSshHostKey, recordSshContact, recordSshError, sshSouls, type SshSettings } from '../../db/repos/souls';
import { connectSsh, SshFailure, type SshConnection } from './connection';
import { openApplySession, type ApplySession } from './apply-session';
import { Slots } from './slots';

export interface SshTransportOptions {
  db: Knex;
  log: Logger;
  /**
   * The scenario role's secrets-store client (secrets/scenario.ts): reads the private key at connect
   * time, below secretstore.scenario_prefix only (issue 28); never the keeper's own client.
   */
  secrets: Pick<ScenarioSecrets, 'readFields' | 'prefix'>;
  maxSessions: number;
  connectTimeoutMs: number;
  /** For the short commands (hostname -f, soul facts, the hello of soul apply); steps have the dispatch step timeout. */
  commandTimeoutMs: number;
  /** How `soul` is started on the host (operator configuration, used as written). */
  soulCommand: string;
  /** The ledger folder on the host (`soul apply --state-dir`). */
  stateDir: string;
}

export interface CheckResult {
  reachable: boolean;
  reason: string | null;
  facts: Record<string, unknown> | null;
  checked_at: string;
}

/** `'...'` for the remote shell: every value the keeper puts in a command line goes through this. */
/** The SID rule of agent/fqdn.ts, as a POSIX shell line: the hostname if it has a dot, else `hostname -f`. */
const FQDN_COMMAND = 'h=$(hostname); case "$h" in *.*) echo "$h" ;; *) hostname -f ;; esac';

export const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

export function createSshTransport(opts: SshTransportOptions) {
  const slots = new Slots(opts.maxSessions);
  const log = opts.log.child({ component: 'ssh' });

  async function privateKey(ssh: SshSettings): Promise<string> {
    // Refused at registration already (api/routes/souls-ssh.ts); again here for rows older than the rule.
    const why = credentialRefProblem(ssh.credential_ref, opts.secrets.prefix);
    const ref = parseReference(ssh.credential_ref);
    if (why || !ref)
      throw new SshFailure(`credential_ref ${why ?? 'is not secretstore:<path>#<field>'}; nothing was read`);
    let fields: Record<string, unknown>;
    try {
      fields = await opts.secrets.readFields(ref.path);
    } catch (err) {
      throw new SshFailure(`cannot read the private key at ${ssh.credential_ref}: ${(err as Error).message}`);
    }
    const v = fields[ref.field];
    if (typeof v !== 'string' || v === '')
      throw new SshFailure(`the secret at ${ref.path} has no field "${ref.field}"`);
    return v;
  }

  const sudo = (ssh: SshSettings, cmd: string) => (ssh.sudo ? `sudo -n -- ${cmd}` : cmd);

  /** Steps 1 to 3; the caller closes the connection. */
  async function reach(sid: string, ssh: SshSettings): Promise<SshConnection> {
    const conn = await connectSsh(ssh, await privateKey(ssh), { timeoutMs: opts.connectTimeoutMs });
    try {
      // Trust on first use pins the key at the first authenticated contact, whatever follows: pinning
      // only after a fully successful contact let every failed one be answered by a different key.
      if (ssh.host_key === null) {
        const pinned = await pinSshHostKey(opts.db, sid, conn.seenHostKey);
        if (pinned !== null && pinned !== conn.seenHostKey)
          throw new SshFailure(
            `host key changed: ${ssh.address}:${ssh.port} presented another key than the one pinned by a contact at the same time`,
          );
      }
      const r = await conn.exec(FQDN_COMMAND, { timeoutMs: opts.commandTimeoutMs, label: "reading the host's FQDN" });
      const fqdn = r.stdout.trim().toLowerCase().replace(/\.$/, '');
      if (r.code !== 0)
        throw new SshFailure(`the host's FQDN could not be read (exit ${r.code}): ${r.stderr.trim().slice(0, 200)}`);
      if (fqdn !== sid)
        throw new SshFailure(
          `wrong host: ${ssh.address}:${ssh.port} says its FQDN is "${fqdn.slice(0, 253)}", not ${sid}`,
        );
      return conn;
    } catch (err) {
      conn.close();
      throw err;
    }
  }

  async function settings(sid: string): Promise<SshSettings> {
    const ssh = (await sshSouls(opts.db, [sid])).get(sid);
    if (!ssh)
      throw new SshFailure(
        `soul ${sid} is not an SSH soul the keeper may reach (not registered with transport ssh, or revoked)`,
      );
    return ssh;
  }

  const failed = async (sid: string, err: unknown): Promise<SshFailure> => {
    const f = err instanceof SshFailure ? err : new SshFailure(`SSH to ${sid} failed: ${(err as Error).message}`);
    await recordSshError(opts.db, sid, f.reason).catch(() => undefined);
    log.warn('ssh host not reached', { sid, reason: f.reason });
    return f;
  };

  return {
    /** Whether these SIDs are SSH souls (the rest are agents). */
    async owns(sids: string[]): Promise<Set<string>> {
      return new Set((await sshSouls(opts.db, sids)).keys());
    },

    /** Opens a host for one dispatch: a slot, a verified connection, and `soul apply` ready for steps. */
    async open(sid: string, signal: AbortSignal): Promise<ApplySession> {
      const release = await slots.take(signal);
      let conn: SshConnection | undefined;
      try {
        const ssh = await settings(sid);
        conn = await reach(sid, ssh);
        const session = await openApplySession(conn, {
          sid,
          command: sudo(ssh, `${opts.soulCommand} apply --state-dir=${shellQuote(opts.stateDir)}`),
          helloTimeoutMs: opts.commandTimeoutMs,
          onClose: release,
        });
        await recordSshContact(opts.db, sid, session.soulprint, conn.seenHostKey);
        return session;
      } catch (err) {
        conn?.close();
        release();
        throw await failed(sid, err);
      }
    },

    /** POST /v1/souls/{sid}/check: reach the host and read its facts, nothing applied. */
    async check(sid: string): Promise<CheckResult> {
      const checked_at = new Date().toISOString();
      const release = await slots.take();
      let conn: SshConnection | undefined;
      try {
        const ssh = await settings(sid);
        conn = await reach(sid, ssh);
        const r = await conn.exec(sudo(ssh, `${opts.soulCommand} facts`), {
          timeoutMs: opts.commandTimeoutMs,
          label: '`soul facts`',
        });
        let facts: Record<string, unknown>;
        try {
          facts = (JSON.parse(r.stdout.trim().split('\n').pop() ?? '') as { soulprint: Record<string, unknown> })
            .soulprint;
        } catch {
          throw new SshFailure(
            `\`soul facts\` did not answer on the host (exit ${r.code}): ${r.stderr.trim().slice(0, 300) || 'no output'}; is the soul package installed?`,
          );
        }
        await recordSshContact(opts.db, sid, facts, conn.seenHostKey);
        return { reachable: true, reason: null, facts, checked_at };
      } catch (err) {
        return { reachable: false, reason: (await failed(sid, err)).reason, facts: null, checked_at };
      } finally {
        conn?.close();
        release();
      }
    },
  };
}

export type SshTransport = ReturnType<typeof createSshTransport>;
