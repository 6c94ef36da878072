// `soul apply` and `soul facts`: the soul without a stream, for push mode over SSH (docs/ssh.md).
// The keeper runs `soul apply` once per host per dispatch over its SSH connection and feeds it step
// requests as JSON lines on stdin; each answer is one JSON line on stdout. The steps go through the
// same state modules and the same ledger code as `soul run`, so a dispatch retried after a keeper
// crash replays the recorded results and applies nothing twice.
//
// Wire (one JSON object per line):
//   out first  {"hello": {"sid", "soulprint"}}          or {"error": "..."} and exit 1
//   in         {"id", "applyId", "stepIndex", "module", "params", "dryRun"?, "showContent"?, "program"?}
//   out        {"id", "changed", "ok", "output", "replayed", "diff"?, "files"?} or {"id", "error"}
// dryRun is check mode (a plan): nothing changes and the ledger is not touched. program: a module
// shipped with the service, {sha256, content (base64), dry_run, timeout_ms}, cached in <stateDir>/modules.
import path from 'node:path';
import readline from 'node:readline';
import type { Writable, Readable } from 'node:stream';
import { collectSoulprint } from './facts';
import { findFqdn } from './fqdn';
import { Ledger, LedgerLockedError, applyStep, createProcessRunner, createStateRegistry } from './state/index';
import { dpkgStatusReader } from './exec/dpkg-status';
import { withProgram } from './modules/module';
import { loadContentKey } from './state/content-identity';
import { contentKeyOf } from './steps';

/** A previous session's `soul apply` may still be finishing its step after its connection dropped. */
const LOCK_WAIT_MS = 20_000;

export interface OneShotIo {
  input: Readable;
  output: Writable;
}

function line(out: Writable, v: unknown): Promise<void> {
  return new Promise((resolve, reject) =>
    out.write(`${JSON.stringify(v)}\n`, (err) => (err ? reject(err) : resolve())),
  );
}

async function openLedger(dir: string): Promise<Ledger> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      return await Ledger.open(dir);
    } catch (err) {
      if (!(err instanceof LedgerLockedError) || Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

/** `soul facts`: this host's SID and soulprint as one JSON line. */
export async function soulFacts(io: Pick<OneShotIo, 'output'>): Promise<void> {
  const sid = await findFqdn();
  await line(io.output, { sid, soulprint: collectSoulprint(sid) });
}

/** `soul apply`: applies step requests from `input` until it ends; the ledger is <stateDir>/<sid>/ledger. */
export async function soulApply(opts: { stateDir: string } & OneShotIo): Promise<number> {
  let sid: string;
  let ledger: Ledger;
  try {
    sid = await findFqdn();
    ledger = await openLedger(path.join(opts.stateDir, sid, 'ledger'));
  } catch (err) {
    await line(opts.output, { error: (err as Error).message });
    return 1;
  }
  try {
    const soulprint = collectSoulprint(sid);
    const registry = createStateRegistry({
      facts: { ...soulprint },
      runner: createProcessRunner(),
      installed: dpkgStatusReader(),
      // The same content key as this host's ledger folder keeps across sessions (docs/secrets.md).
      ...contentKeyOf(path.join(opts.stateDir, sid), loadContentKey),
    });
    await line(opts.output, { hello: { sid, soulprint } });
    // One step at a time, in the order sent: the keeper sends a host's steps in order and waits.
    for await (const text of readline.createInterface({ input: opts.input, crlfDelay: Infinity })) {
      if (text.trim() === '') continue;
      let id: unknown = null;
      try {
        const req = JSON.parse(text) as {
          id: unknown;
          applyId: string;
          stepIndex: number;
          module: string;
          params: unknown;
          dryRun?: unknown;
          showContent?: unknown;
          redact?: Array<{ value: string; placeholder: string }>;
          withhold?: unknown;
          program?: { sha256: string; content: string; dry_run: boolean; timeout_ms: number; runtime?: string };
        };
        const p = req.program;
        const program =
          p && typeof p.sha256 === 'string' && typeof p.content === 'string'
            ? {
                sha256: p.sha256,
                contentBase64: p.content,
                dryRun: p.dry_run === true,
                timeoutMs: Number(p.timeout_ms) || 30_000,
                ...(typeof p.runtime === 'string' && p.runtime ? { runtime: p.runtime } : {}),
              }
            : undefined;
        id = req.id;
        const out = await applyStep(
          {
            applyId: req.applyId,
            host: sid,
            index: req.stepIndex,
            module: req.module,
            params: req.params,
            dryRun: req.dryRun === true,
            showContent: req.showContent === true,
            ...(Array.isArray(req.redact) ? { redact: req.redact } : {}),
            ...(typeof req.withhold === 'string' && req.withhold !== '' ? { withhold: req.withhold } : {}),
          },
          { registry: withProgram(registry, req.module, program, path.join(opts.stateDir, 'modules')), ledger },
        );
        await line(opts.output, {
          id,
          changed: out.changed,
          ok: out.ok,
          output: out.output,
          replayed: out.replayed,
          ...(out.diff ? { diff: out.diff } : {}),
          ...(out.files ? { files: out.files } : {}),
        });
      } catch (err) {
        await line(opts.output, { id, error: (err as Error).message });
      }
    }
    return 0;
  } finally {
    await ledger.close();
  }
}
