// What `soul run` does with a step request from the keeper: hands it to a StepHandler. The handler
// is injectable (tests and the benchmark swarm pass their own); the default one applies the step
// with the soul's state modules and its step ledger (agent/state), which answers a redelivered
// step from the ledger instead of applying it twice.
import path from 'node:path';
import type { Soulprint } from '../proto/types';
import type { SoulConfig } from './config';
import { Ledger } from './ledger/ledger';
import type { CommandRunner } from './exec/runner';
import type * as StateModules from './state/index';
import type * as ContentIdentity from './state/content-identity';
import type * as DpkgStatus from './exec/dpkg-status';
import type * as ServiceModules from './modules/module';
import type { StepProgram } from './modules/module';
import type { FileIdentity } from './state/types';

export interface DeliveredStep {
  requestId: string;
  applyId: string;
  stepIndex: number;
  module: string;
  params: unknown;
  dryRun: boolean;
  /** Check mode: a file module may answer a unified diff of the content. */
  showContent?: boolean;
  /** A module shipped with the service: its program (agent/modules/). */
  program?: StepProgram;
  /** Secret values to scrub from the output and diff before the ledger keeps them, with their placeholders. */
  redact?: Array<{ value: string; placeholder: string }>;
  /** Kept and answered instead of the output: the keeper withholds this step's output. */
  withhold?: string;
}

export interface StepReply {
  changed: boolean;
  ok: boolean;
  output: string;
  replayed: boolean;
  diff?: Record<string, unknown>;
  /** The files a file module read and wrote, by identity (agent/state/content-identity.ts). */
  files?: FileIdentity[];
}

export interface StepContext {
  /** The keeper cancelled the request (timeout, operator abort) or the stream ended. */
  signal: AbortSignal;
  progress(message: string): void;
}

export interface StepHandler {
  handle(req: DeliveredStep, ctx: StepContext): Promise<StepReply>;
  close?(): Promise<void>;
}

/** How often a running soul prunes its ledger. */
export const PRUNE_EVERY_MS = 6 * 3600_000;

/** The step ledger lives beside the identity: both belong to this host's one soul process. */
export function ledgerDir(config: SoulConfig): string {
  return path.join(config.paths.seed, 'ledger');
}

/**
 * The state-module applier. Opening the ledger takes its directory lock, so a second `soul run`
 * with the same paths.seed stops at start instead of applying steps beside the first.
 * `runner` runs the modules' commands: by default as child processes of this process; the
 * benchmark swarm (bench/fanout), a thousand souls in one process, passes one that spawns them
 * from small helper processes instead.
 */
export async function createStateStepHandler(ctx: {
  sid: string;
  config: SoulConfig;
  soulprint: Soulprint;
  runner?: CommandRunner;
}): Promise<StepHandler> {
  const ledger = await Ledger.open(ledgerDir(ctx.config));
  // Journals are pruned at start and every PRUNE_EVERY_MS, keeping `ledger.retention_days` (30 by
  // default). A pruned apply's steps, delivered again, would be applied again, so retention must
  // outlast every redelivery: a dispatch activity retries for at most 6 attempts of up to 1 h
  // (runs/workflows/dispatch-batch.ts), and a run can also wait out a stopped control plane (Temporal,
  // the keepers) for as long as that outage lasts. 30 days covers both with a wide margin; the
  // journals are small (one line per step).
  const prune = () => {
    ledger.prune(ctx.config.ledger.retention_days).catch(() => undefined);
  };
  prune();
  const pruner = setInterval(prune, PRUNE_EVERY_MS);
  pruner.unref();
  // The state modules (and child_process under them) load at the first step, not at start: an idle
  // soul on every host of a fleet does not carry them (docs/performance.md, the soul's footprint).
  let state:
    | {
        registry: StateModules.StateRegistry;
        applyStep: typeof StateModules.applyStep;
        withProgram: typeof ServiceModules.withProgram;
      }
    | undefined;
  const loadState = () => {
    const m = require('./state/index') as typeof StateModules;
    const { dpkgStatusReader } = require('./exec/dpkg-status') as typeof DpkgStatus;
    // One reader per soul: its read of the package database is kept while the database is unchanged.
    const registry = m.createStateRegistry({
      facts: { ...ctx.soulprint },
      runner: ctx.runner ?? m.createProcessRunner(),
      installed: dpkgStatusReader(),
      // core.file.absent / core.dir.absent never remove the soul's own folders.
      soulPaths: [ctx.config.paths.seed, ctx.config.paths.modules],
      ...contentKeyOf(
        ctx.config.paths.seed,
        (require('./state/content-identity') as typeof ContentIdentity).loadContentKey,
      ),
    });
    const { withProgram } = require('./modules/module') as typeof ServiceModules;
    return { registry, applyStep: m.applyStep, withProgram };
  };
  return {
    async handle(req) {
      state ??= loadState();
      const { applyStep } = state;
      // A module shipped with the service runs from the soul's program cache, paths.modules.
      const registry = state.withProgram(state.registry, req.module, req.program, ctx.config.paths.modules);
      // Cancellation is not passed on: a state module runs to its end so the ledger stays truthful;
      // the keeper treats a cancelled request as unknown and a redelivery replays the record.
      const out = await applyStep(
        {
          applyId: req.applyId,
          host: ctx.sid,
          index: req.stepIndex,
          module: req.module,
          params: req.params,
          dryRun: req.dryRun,
          showContent: req.showContent === true,
          ...(req.redact?.length ? { redact: req.redact } : {}),
          ...(req.withhold ? { withhold: req.withhold } : {}),
        },
        { registry, ledger },
      );
      return {
        changed: out.changed,
        ok: out.ok,
        output: out.output,
        replayed: out.replayed,
        ...(out.diff ? { diff: out.diff } : {}),
        ...(out.files ? { files: out.files } : {}),
      };
    },
    close: () => {
      clearInterval(pruner);
      return ledger.close();
    },
  };
}

/**
 * The soul's content key for the file modules' identities; without one (an unwritable seed folder)
 * the steps still run and report no identities, so a copy of a secret file is not recognised.
 */
export function contentKeyOf(seedDir: string, load: (dir: string) => Buffer): { contentKey?: Buffer } {
  try {
    return { contentKey: load(seedDir) };
  } catch (err) {
    process.stderr.write(`soul: no content key, file identities not reported: ${(err as Error).message}\n`);
    return {};
  }
}
