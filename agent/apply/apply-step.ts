// The soul's side of applying one step: the function the event-stream handler calls for each step
// the keeper delivers.
//
//   applyStep(
//     { applyId, host, index, module, params, dryRun? },
//     { registry, ledger, clock? },
//   ): Promise<StepOutcome>          // never rejects
//
// - applyId/index/host: the step's identity (apply_id is the keeper's workflow id, host the SID).
// - module: "core.<module>.<state>"; params: already resolved by the keeper.
// - The outcome is { changed, ok, output, diff?, replayed, dryRun, started_at, finished_at }.
//
// Exactly-once: a step already in the ledger is answered from the ledger (replayed: true) and the
// module is not run again. Otherwise the module runs and its result is recorded (fsynced) BEFORE
// this resolves, so a result the keeper has seen is always one the soul will replay. Two
// deliveries of the same step at once are serialised by a per-step mutex; that is sufficient
// because one soul process owns its ledger directory (see agent/ledger/dir-lock.ts).
// Dry runs change nothing, so they neither read nor write the ledger.
import type { LedgerEntry, LedgerRecord } from '../ledger/ledger';
import { assertApplyId, assertStepIndex } from '../ledger/keys';
import { checkWireParams } from '../../scenario/modules';
import type { StateRegistry } from '../state/registry';
import { errorMessage } from '../state/shape';
import type { EarlierStep, ModuleResult } from '../state/types';
import { afterInstall, pendingInstall } from '../state/pending';
import { KeyedMutex } from './keyed-mutex';
import { RunMemory, namesOf, pathsOf } from './run-memory';

export interface StepToApply {
  applyId: string;
  host: string;
  index: number;
  module: string;
  params: unknown;
  dryRun?: boolean;
  /** Dry run only: a file module may show a unified diff of the content (the step holds no secret). */
  showContent?: boolean;
  /** Secret values (with their placeholders) scrubbed from the output and diff before the ledger keeps them. */
  redact?: Array<{ value: string; placeholder: string }>;
  /** Kept and answered instead of the output: the keeper withholds it (the step may read a secret file). */
  withhold?: string;
}

export interface StepOutcome extends ModuleResult {
  /** Answered from the ledger; nothing was run this time. */
  replayed: boolean;
  dryRun: boolean;
  started_at: string;
  finished_at: string;
}

/** The part of Ledger the applier uses; a test may pass any implementation. */
export interface StepLedger {
  get(applyId: string, index: number): Promise<LedgerRecord | undefined>;
  record(applyId: string, index: number, entry: LedgerEntry): Promise<LedgerRecord>;
}

export interface Clock {
  now(): Date;
}

export interface ApplyStepDeps {
  registry: Pick<StateRegistry, 'get'>;
  ledger: StepLedger;
  clock?: Clock;
  /** The steps this soul ran earlier in each apply; default: one per ledger. */
  memory?: RunMemory;
}

const systemClock: Clock = { now: () => new Date() };

// One mutex per ledger: the ledger is the unit of ownership (one per soul process).
const mutexes = new WeakMap<StepLedger, KeyedMutex>();
function mutexFor(ledger: StepLedger): KeyedMutex {
  let m = mutexes.get(ledger);
  if (!m) mutexes.set(ledger, (m = new KeyedMutex()));
  return m;
}

const memories = new WeakMap<StepLedger, RunMemory>();
function memoryFor(deps: ApplyStepDeps): RunMemory {
  if (deps.memory) return deps.memory;
  let m = memories.get(deps.ledger);
  if (!m) memories.set(deps.ledger, (m = new RunMemory()));
  return m;
}

/** Runs the named module; every failure, including a throwing module, becomes ok:false. */
async function runModule(req: StepToApply, deps: ApplyStepDeps): Promise<ModuleResult> {
  const mod = typeof req.module === 'string' ? deps.registry.get(req.module) : undefined;
  if (!mod)
    return { changed: false, ok: false, output: `unknown state module ${JSON.stringify(req.module)} on this soul` };
  // The module's contract (scenario/modules), the same schema render and soul-lint check with.
  const problems = checkWireParams(req.module as string, req.params);
  if (problems !== null && problems.length > 0) {
    return {
      changed: false,
      ok: false,
      output: `${req.module}: invalid params: ${problems.map((p) => p.message).join('; ')}`,
    };
  }
  const memory = memoryFor(deps);
  try {
    const earlier = memory.earlier(req.applyId, req.index);
    const decided: string[] = [];
    const r = predicted(
      req,
      earlier,
      decided,
      await mod.run(req.params, {
        dryRun: req.dryRun === true,
        showContent: req.dryRun === true && req.showContent === true,
        ...(earlier.length ? { earlier } : {}),
        ...(req.dryRun === true ? { decided } : {}),
        ...(req.redact?.length ? { secrets: req.redact.map((r) => r.value) } : {}),
      }),
    );
    const result: ModuleResult = {
      changed: r.changed === true,
      ok: r.ok === true,
      output: req.withhold ?? scrub(String(r.output ?? ''), req.redact),
    };
    if (r.diff !== undefined) result.diff = scrubDiff(r.diff, req.redact);
    if (r.files?.length) result.files = r.files;
    memory.remember(req.applyId, {
      index: req.index,
      module: req.module as string,
      changed: result.changed,
      paths: pathsOf(req.params, req.module),
      names: namesOf(req.params),
    });
    return result;
  } catch (err) {
    return {
      changed: false,
      ok: false,
      output: req.withhold ?? scrub(`${req.module}: ${errorMessage(err)}`, req.redact),
    };
  }
}

// A plan's step that reads what an earlier step of the plan would install (agent/state/pending.ts):
// its answer says what is decided at apply, in its output and its diff (`decided_at_apply`, which an
// apply of the plan compares like the rest of the diff). A module that cannot read its current state
// because a user, group or unit is missing, after an earlier step that would install a package,
// answers "would" with that reason instead of failing: which users and units a package brings is
// known only once it is installed.
const MISSING = /(reading current state failed: (unknown (user|group) "[^"]*"|no unit named \S+))/;
function predicted(req: StepToApply, earlier: EarlierStep[], decided: string[], r: ModuleResult): ModuleResult {
  if (req.dryRun !== true) return r;
  if (!r.ok) {
    const pkg = pendingInstall({ dryRun: true, earlier });
    const missing = MISSING.exec(String(r.output ?? ''));
    if (!pkg || !missing) return r;
    const why = `${missing[2]} now, ${afterInstall(pkg)}`;
    return {
      changed: true,
      ok: true,
      output: `would apply ${req.module} (dry run; decided at apply: ${why})`,
      diff: { decided_at_apply: [why] },
    };
  }
  if (decided.length === 0) return r;
  return {
    ...r,
    output: `${r.output.replace(/ \(dry run\)$/, '')} (dry run; decided at apply: ${decided.join('; ')})`,
    diff: { ...(r.diff ?? {}), decided_at_apply: decided },
  };
}

// The keeper's secret boundary (docs/secrets.md "Output"), applied here too so the ledger on the
// host never keeps what the keeper would not show: a literal replace of each value it names.
function scrub(text: string, redact: StepToApply['redact']): string {
  let out = text;
  for (const r of redact ?? []) if (r.value.length >= 4) out = out.split(r.value).join(r.placeholder);
  return out;
}

function scrubDiff<T>(diff: T, redact: StepToApply['redact']): T {
  if (!redact?.length) return diff;
  return JSON.parse(
    scrub(
      JSON.stringify(diff),
      redact.map((r) => ({ ...r, value: JSON.stringify(r.value).slice(1, -1) })),
    ),
  );
}

function fromRecord(rec: LedgerRecord, replayed: boolean): StepOutcome {
  const out: StepOutcome = {
    changed: rec.changed,
    ok: rec.ok,
    output: rec.output,
    replayed,
    dryRun: false,
    started_at: rec.started_at,
    finished_at: rec.finished_at,
  };
  if (rec.diff !== undefined) out.diff = rec.diff;
  return out;
}

export async function applyStep(req: StepToApply, deps: ApplyStepDeps): Promise<StepOutcome> {
  const clock = deps.clock ?? systemClock;
  const startedAt = clock.now().toISOString();
  const dryRun = req.dryRun === true;
  const outcome = (r: ModuleResult): StepOutcome => ({
    ...r,
    replayed: false,
    dryRun,
    started_at: startedAt,
    finished_at: clock.now().toISOString(),
  });
  const failed = (output: string) => outcome({ changed: false, ok: false, output });

  try {
    assertApplyId(req.applyId);
    assertStepIndex(req.index);
  } catch (err) {
    return failed(errorMessage(err)); // cannot be recorded under a key that is not valid
  }
  if (typeof req.host !== 'string' || req.host === '') return failed('step has no host');
  if (dryRun) return outcome(await runModule(req, deps));

  return mutexFor(deps.ledger).run(`${req.applyId}\n${req.index}`, async () => {
    let prior: LedgerRecord | undefined;
    try {
      prior = await deps.ledger.get(req.applyId, req.index);
    } catch (err) {
      // Acting without knowing whether we already acted would break exactly-once; refuse instead.
      return failed(`ledger unreadable, step not applied: ${errorMessage(err)}`);
    }
    if (prior) {
      if (prior.host !== req.host) {
        return failed(
          `step ${req.applyId}#${req.index} was recorded for host ${prior.host}, not ${req.host}; not applied`,
        );
      }
      return fromRecord(prior, true);
    }

    // The files' identities go to the keeper only: the ledger keeps what the step did, not them.
    const { files, ...result } = await runModule(req, deps);
    const withFiles = (o: StepOutcome): StepOutcome => (files ? { ...o, files } : o);
    const entry: LedgerEntry = {
      host: req.host,
      module: String(req.module),
      ...result,
      started_at: startedAt,
      finished_at: clock.now().toISOString(),
    };
    try {
      return withFiles(fromRecord(await deps.ledger.record(req.applyId, req.index, entry), false));
    } catch (err) {
      // The module ran but its result is not durable, so it cannot be reported as done: a
      // redelivery will run the (idempotent) module again.
      return outcome({
        ...result,
        ...(files ? { files } : {}),
        ok: false,
        output: `${result.output}; result not recorded in the ledger: ${errorMessage(err)}`,
      });
    }
  });
}
