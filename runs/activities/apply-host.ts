// Applies one host's rendered steps, in order, through its soul's live stream, and decides each
// step's outcome with its apply-time expressions:
//   when          false -> the step is `skipped` (not sent)
//   changed_when  overrides `changed` from the soul's answer
//   failed_when   true -> the step failed, whatever the module said
//   until         false -> send again after `delay_ms`, at most `retries` more times, then failed
// Expressions see exactly what render saw (input.* with defaults, state.*, soulprint.self.*), <name>
// for each earlier `register: <name>` and, after a send, result.{changed, ok, output}.
// Registered results exist for every step of the plan on every host (docs/scenario.md "register"):
//   {ok, changed, failed, skipped, output}; a step that did not run here (left out at render by
//   `on:`/`where:`/`when:`, `when:` false at apply time, or its requisites unmet) registers
//   {ok: true, changed: false, failed: false, skipped: true, output: ''}.
// Requisites: `require: [i]` runs unless one of steps i failed here (a step that did not run here
// counts as succeeded); `onchanges: [i]` only when at least one of steps i changed something here,
// or changed it in the locked run(s) this one retries and the work it owed was never done (`owed`).
// A step the soul did not answer (timeout, stream lost) is `unknown` and ends the host: silence
// is never success. After a failed or unknown step the host's remaining steps are `skipped`.
// Exactly-once: the ledger key is (apply_id, host, step index); an `until` re-send uses the
// apply_id `<apply_id>:u<attempt>` so it is a new key, and a crash-retried activity replays the
// same keys in the same order and gets the recorded answers.
import { expressionValues } from './expression-values';
import type { HostStatus, SkipReason, StepRow, StepStatus } from '../../db/repos/runs';
import type { PlanStep } from '../../scenario/render/plan';
import type { StepSender } from './deps';
import { cleanStepOutput } from './step-output';

export const MAX_UNTIL_RETRIES = 20;
export const MAX_UNTIL_DELAY_MS = 60_000;

export interface HostRun {
  applyId: string;
  sid: string;
  steps: PlanStep[];
  context: Record<string, unknown>;
  sender: StepSender;
  evaluate(src: string, context: Record<string, unknown>): unknown;
  stepTimeoutMs: number;
  signal: AbortSignal;
  /** Indexes of `onchanges:` steps whose trigger changed in a locked run this one retries and
   *  that did not run after it: they run here whether or not their triggers change again. */
  owed?: ReadonlySet<number>;
  /** Check mode (a plan, docs/plans.md): every step is sent as a dry run, `changed` means "would
   *  change", `until:` is not waited for. `showContent(step)` says whether the soul may show the
   *  file's content in a unified diff (false for a step that carries a secret). */
  check?: { showContent(step: PlanStep): boolean };
}

/** What `register:` holds for a step that did not run on this host. */
export const SKIPPED_RESULT = Object.freeze({ ok: true, changed: false, failed: false, skipped: true, output: '' });

const SKIP_TEXT: Record<SkipReason, string> = {
  on: 'left out on this host by `on:`',
  where: 'left out on this host: `where:` is false',
  when: '`when:` is false',
  require: 'require: a required step failed',
  onchanges: 'onchanges: none of the watched steps changed',
  earlier_failure: 'not run: an earlier step of this host did not succeed',
  secret_unavailable: 'not sent: a secret this host needs could not be read',
  drift: 'not run: the host no longer matches the plan',
  loop: 'left out on this host: its `loop:` has no items',
};

export interface HostOutcome {
  status: HostStatus;
  reason: string | null;
  steps: StepRow[];
  startedAt: Date;
  finishedAt: Date;
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const onAbort = () => {
      clearTimeout(t);
      resolve();
    };
    // Removed when the timer fires, so retries do not pile listeners onto the activity's signal.
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });

function isTrue(v: unknown): boolean {
  return v === true;
}

export async function applyHost(run: HostRun): Promise<HostOutcome> {
  const startedAt = new Date();
  const rows: StepRow[] = [];
  const registered: Record<string, unknown> = {};
  const outcome = new Map<number, StepStatus>();
  let hostStatus: HostStatus = 'ok';
  let reason: string | null = null;
  const row = (step: PlanStep, status: StepStatus, extra: Partial<StepRow> = {}): StepRow => ({
    apply_id: run.applyId,
    sid: run.sid,
    step_index: step.index,
    name: step.name,
    module: step.module,
    status,
    changed: false,
    output: '',
    attempts: 0,
    replayed: false,
    started_at: null,
    finished_at: null,
    skip_reason: null,
    ...extra,
  });
  // A task with `loop:` registers a list, one result per item, in item order (an empty list when it
  // made no item here); any other step registers its one result.
  const register = (step: PlanStep, result: Record<string, unknown>) => {
    if (!step.register) return;
    if (!step.loop) {
      registered[step.register] = result;
      return;
    }
    const list = Array.isArray(registered[step.register]) ? (registered[step.register] as unknown[]) : [];
    if (step.loop.length > 0) list[step.loop.index0] = result;
    registered[step.register] = list;
  };
  const skip = (step: PlanStep, why: SkipReason, detail?: string) => {
    rows.push(row(step, 'skipped', { skip_reason: why, output: detail ?? SKIP_TEXT[why] }));
    outcome.set(step.index, 'skipped');
    register(step, { ...SKIPPED_RESULT });
  };
  // The `item` and `index` of a looped step, as render gave them to its params.
  const loopContext = (step: PlanStep) =>
    step.loop && step.loop.length > 0 ? { item: step.loop.item, index: step.loop.index0 } : {};

  for (const step of run.steps) {
    if (hostStatus === 'failed' || hostStatus === 'unknown') {
      skip(step, 'earlier_failure');
      continue;
    }
    if (step.skip) {
      skip(step, step.skip);
      continue;
    }
    const ctx = () => ({ ...run.context, ...registered, ...loopContext(step) });
    const unmet = (step.require ?? []).filter((i) => outcome.get(i) === 'failed' || outcome.get(i) === 'unknown');
    if (unmet.length > 0) {
      skip(step, 'require', `require: step(s) ${unmet.join(', ')} did not succeed`);
      continue;
    }
    if (step.onchanges && !step.onchanges.some((i) => outcome.get(i) === 'changed') && !run.owed?.has(step.index)) {
      skip(step, 'onchanges', `onchanges: none of step(s) ${step.onchanges.join(', ')} changed`);
      continue;
    }
    try {
      if (step.when !== undefined && !isTrue(run.evaluate(step.when, ctx()))) {
        skip(step, 'when');
        continue;
      }
    } catch (err) {
      rows.push(row(step, 'failed', { output: `when: ${(err as Error).message}` }));
      outcome.set(step.index, 'failed');
      hostStatus = 'failed';
      reason = `step ${step.index} (${step.name}): when failed to evaluate`;
      continue;
    }
    const retries = Math.min(Math.max(0, step.retries ?? 0), MAX_UNTIL_RETRIES);
    const delay = Math.min(Math.max(0, step.delay_ms ?? 1000), MAX_UNTIL_DELAY_MS);
    let attempt = 0;
    let first: Date | null = null;
    for (;;) {
      attempt++;
      let answer;
      try {
        answer = await run.sender.sendStep(
          run.sid,
          {
            applyId: attempt === 1 ? run.applyId : `${run.applyId}:u${attempt}`,
            stepIndex: step.index,
            module: step.module,
            params: step.params,
            ...(step.program ? { program: step.program } : {}),
            ...(run.check ? { dryRun: true, showContent: run.check.showContent(step) } : {}),
          },
          { timeoutMs: run.stepTimeoutMs, signal: run.signal },
        );
        // The host's text, escaped and capped before any expression, row or answer sees it.
        answer = { ...answer, output: cleanStepOutput(answer.output) };
      } catch (err) {
        rows.push(
          row(step, 'unknown', {
            output: cleanStepOutput((err as Error).message),
            attempts: attempt,
            started_at: first,
            finished_at: new Date(),
          }),
        );
        hostStatus = 'unknown';
        reason = `step ${step.index} (${step.name}): ${(err as Error).message}`;
        break;
      }
      first ??= answer.startedAt;
      let changed = answer.changed;
      let ok = answer.ok;
      let untilMet = true;
      let overrode: string | null = null;
      try {
        const c = { ...ctx(), result: { changed: answer.changed, ok: answer.ok, output: answer.output } };
        if (step.changed_when !== undefined) {
          changed = isTrue(run.evaluate(step.changed_when, c));
          // The report flags the override: `changed` is then the expression's word, not the module's.
          if (changed !== answer.changed) overrode = step.changed_when;
        }
        if (step.failed_when !== undefined) {
          // Replaces the module's verdict (false: not failed, whatever the module said).
          ok = !isTrue(run.evaluate(step.failed_when, c));
          if (!ok) {
            const read = expressionValues(step.failed_when, (p) => run.evaluate(p, c));
            answer = {
              ...answer,
              output: `${answer.output}\nfailed_when: \`${step.failed_when}\` is true${read ? ` (${read})` : ''}`,
            };
          }
        }
        // A dry run changes nothing, so waiting for `until` would wait for nothing.
        if (step.until !== undefined && ok && !run.check) untilMet = isTrue(run.evaluate(step.until, c));
      } catch (err) {
        ok = false;
        answer = { ...answer, output: `${answer.output}\nexpression error: ${(err as Error).message}` };
      }
      if (ok && !untilMet && attempt <= retries && !run.signal.aborted) {
        await sleep(delay, run.signal);
        continue;
      }
      if (ok && !untilMet) {
        ok = false;
        answer = { ...answer, output: `${answer.output}\nuntil: still false after ${attempt} attempt(s)` };
      }
      register(step, { ok, changed, failed: !ok, skipped: false, output: answer.output });
      outcome.set(step.index, ok ? (changed ? 'changed' : 'ok') : 'failed');
      rows.push(
        row(step, ok ? (changed ? 'changed' : 'ok') : 'failed', {
          changed,
          ...(overrode !== null ? { changed_when: overrode } : {}),
          output: answer.output,
          attempts: attempt,
          replayed: answer.replayed,
          started_at: first,
          finished_at: answer.finishedAt,
          diff: answer.diff ?? null,
        }),
      );
      if (!ok) {
        hostStatus = 'failed';
        reason = `step ${step.index} (${step.name}) failed`;
      } else if (changed) hostStatus = 'changed';
      break;
    }
  }
  // A host that did not succeed says what it had already changed: nothing of it is committed, but
  // the host itself is not as it was.
  if (reason !== null) {
    const changed = rows.filter((r) => r.changed).map((r) => `${r.step_index} (${r.name})`);
    reason +=
      changed.length > 0
        ? `; changed on this host in this run: step(s) ${changed.join(', ')}`
        : '; nothing was changed on this host';
  }
  return { status: hostStatus, reason, steps: rows, startedAt, finishedAt: new Date() };
}
