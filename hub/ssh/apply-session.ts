// One `soul apply` on one host for one dispatch, over the host's SSH connection: step requests go
// down its stdin as JSON lines and answers come back on stdout (agent/oneshot.ts has the wire).
// Secrets are revealed here, in the line written to the host's own authenticated channel, as the
// hub's stream session does for agents; nothing else sees the revealed text.
import readline from 'node:readline';
import { redactions, revealJson, type SecretValue } from '../../common/secret';
import { optionalFiles, parseDiff } from '../session';
import type { FileIdentityMsg } from '../../proto/types';
import type { SshConnection } from './connection';
import { SshFailure } from './connection';

export interface SshStepAnswer {
  changed: boolean;
  ok: boolean;
  output: string;
  startedAt: Date;
  finishedAt: Date;
  replayed: boolean;
  diff?: Record<string, unknown>;
  files?: FileIdentityMsg[];
}

export interface ApplySession {
  readonly soulprint: Record<string, unknown>;
  sendStep(
    sid: string,
    step: {
      applyId: string;
      stepIndex: number;
      module: string;
      params: Record<string, unknown>;
      dryRun?: boolean;
      showContent?: boolean;
      program?: { sha256: string; content: string; dry_run: boolean; timeout_ms: number; runtime?: string };
      redact?: SecretValue[];
      withhold?: string;
    },
    opts: { timeoutMs: number; signal?: AbortSignal },
  ): Promise<SshStepAnswer>;
  isConnected(sid: string): boolean;
  close(): Promise<void>;
}

interface Pending {
  resolve(a: Record<string, unknown>): void;
  reject(e: Error): void;
}

export async function openApplySession(
  conn: SshConnection,
  opts: { sid: string; command: string; helloTimeoutMs: number; onClose(): void },
): Promise<ApplySession> {
  const ch = await conn.stream(opts.command);
  const pending = new Map<number, Pending>();
  let nextId = 1;
  let open = true;
  let stderr = '';
  let hello: ((v: Record<string, unknown>) => void) | undefined;
  ch.stderr.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString('utf8')).slice(-2000);
  });
  const lines = readline.createInterface({ input: ch, crlfDelay: Infinity });
  lines.on('line', (text) => {
    let msg: Record<string, unknown>;
    try {
      msg = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return;
    }
    if (hello) {
      const h = hello;
      hello = undefined;
      h(msg);
      return;
    }
    const p = pending.get(msg.id as number);
    if (p) {
      pending.delete(msg.id as number);
      p.resolve(msg);
    }
  });
  let closed = false;
  const finish = () => {
    if (closed) return;
    closed = true;
    open = false;
    for (const p of pending.values())
      p.reject(
        new Error(
          `the SSH session to ${opts.sid} ended before the step was answered${stderr ? `: ${stderr.trim().slice(-300)}` : ''}`,
        ),
      );
    pending.clear();
    conn.close();
    opts.onClose();
  };
  ch.once('close', finish);

  const first = await new Promise<Record<string, unknown>>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new SshFailure(`\`soul apply\` did not start on the host within ${opts.helloTimeoutMs} ms`)),
      opts.helloTimeoutMs,
    );
    hello = (v) => {
      clearTimeout(timer);
      resolve(v);
    };
    ch.once('close', () => {
      clearTimeout(timer);
      reject(
        new SshFailure(
          `\`soul apply\` did not start on the host${stderr ? `: ${stderr.trim().slice(-300)}` : ''}; is the soul package installed (docs/ssh.md)?`,
        ),
      );
    });
  }).catch((err: Error) => {
    ch.close();
    finish();
    throw err;
  });
  if (typeof first.error === 'string') {
    ch.close();
    finish();
    throw new SshFailure(`\`soul apply\` refused to start: ${first.error}`);
  }
  const h = first.hello as { sid?: string; soulprint?: Record<string, unknown> } | undefined;
  if (!h?.soulprint || h.sid !== opts.sid) {
    ch.close();
    finish();
    throw new SshFailure(`\`soul apply\` on the host reports SID ${String(h?.sid)}, not ${opts.sid}`);
  }

  return {
    soulprint: h.soulprint,
    isConnected: () => open,
    async sendStep(_sid, step, sopts) {
      if (!open) throw new Error(`the SSH session to ${opts.sid} is closed`);
      const id = nextId++;
      const startedAt = new Date();
      const answer = await new Promise<Record<string, unknown>>((resolve, reject) => {
        const timer = setTimeout(() => {
          pending.delete(id);
          reject(new Error(`no answer from ${opts.sid} over SSH within ${sopts.timeoutMs} ms`));
        }, sopts.timeoutMs);
        const onAbort = () => {
          clearTimeout(timer);
          pending.delete(id);
          reject(new Error('dispatch cancelled before the host answered'));
        };
        sopts.signal?.addEventListener('abort', onAbort, { once: true });
        pending.set(id, {
          resolve: (a) => {
            clearTimeout(timer);
            sopts.signal?.removeEventListener('abort', onAbort);
            resolve(a);
          },
          reject: (e) => {
            clearTimeout(timer);
            sopts.signal?.removeEventListener('abort', onAbort);
            reject(e);
          },
        });
        ch.write(
          `{"id":${id},"applyId":${JSON.stringify(step.applyId)},"stepIndex":${step.stepIndex},"module":${JSON.stringify(step.module)},"params":${revealJson(step.params)}${step.dryRun ? `,"dryRun":true,"showContent":${step.showContent === true}` : ''}${step.program ? `,"program":${JSON.stringify(step.program)}` : ''}${step.redact?.length ? `,"redact":${JSON.stringify(redactions(step.redact))}` : ''}${step.withhold ? `,"withhold":${JSON.stringify(step.withhold)}` : ''}}\n`,
        );
      });
      // The soul could not take the request at all (a malformed key): whether anything ran is known (nothing did), but it is not success.
      if (typeof answer.error === 'string') throw new Error(`the host refused the step: ${answer.error}`);
      return {
        changed: answer.changed === true,
        ok: answer.ok === true,
        output: String(answer.output ?? ''),
        replayed: answer.replayed === true,
        startedAt,
        finishedAt: new Date(),
        ...(answer.diff !== undefined ? { diff: parseDiff(JSON.stringify(answer.diff)) } : {}),
        ...optionalFiles(answer.files),
      };
    },
    async close() {
      if (closed) return;
      ch.end();
      // Let `soul apply` see the end of its input and exit; then the connection goes.
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 2000);
        ch.once('close', () => {
          clearTimeout(t);
          resolve();
        });
      });
      finish();
    },
  };
}
