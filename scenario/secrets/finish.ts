/**
 * After render (issue 28): every string of every step's params is checked against the render's
 * record, and the record's markers become the step's signed handles. Refused, with rule SL024 and
 * the task's position, and nothing planned:
 * - `«secret:` text that is not a whole marker of this record (built from text, cut out of one,
 *   another render's), which is how a forged reference shows;
 * - a token outside a whole marker (a secret went through a function: it would see a placeholder);
 * - a secret in a param other than a file's content (module output, diffs and ledgers repeat them).
 * Committed state and the run's input keep `secretstore:<path>#<field>` references, from the record.
 */
import { referenceText } from '../../common/secret';
import { makeError, sortErrors, type Position, type RenderError } from '../errors';
import type { Scenario, Task } from '../model';
import type { PlanStep, RenderPlan, StepSecret } from '../render/plan';
import type { RenderResult } from '../render/render';
import { RULE_SECRET_USE } from './context';
import { signHandle } from './handles';
import { SECRET_MARK, handleMarker, mapStrings, splitTokens } from './markers';
import type { SecretRecord } from './record';

// Params whose values never come back in a result: the soul reports a file's hash and size, never its content.
const SECRET_PARAMS: Record<string, string[]> = {
  'core.file.present': ['content'],
  'core.file.rendered': ['content', 'vars'],
};

type Problem = 'forged' | 'transformed';

/** The tokens `s` places, or why it is refused. */
function inspect(s: string, record: SecretRecord): { tokens: string[]; problem?: Problem } {
  if (!s.includes(SECRET_MARK) && !record.mentions(s)) return { tokens: [] };
  const { parts, bad } = splitTokens(s);
  const tokens: string[] = [];
  let text = '';
  for (const p of parts) {
    if (typeof p === 'string') text += p;
    else if (record.get(p.marker)) tokens.push(p.marker);
    else return { tokens, problem: 'forged' };
  }
  if (bad) return { tokens, problem: 'forged' };
  if (record.mentions(text)) return { tokens, problem: 'transformed' };
  return { tokens };
}

const FORGED_FIX =
  'read a secret with secretstore("<path>", "<field>") (literal arguments, under the declared prefixes) or a secret input, and place its value as it is';
const TRANSFORMED_FIX = 'insert the secret as it is; store a transformed value in the secrets store instead';

/** Where a task's param is written (a rendered file's content comes from its `vars`/`template`), else the task. */
function paramPos(task: Task | undefined, name: string, fallback: Position): Position {
  if (!task) return fallback;
  const pairs = task.params?.kind === 'map' ? task.params.pairs : [];
  for (const key of name === 'content' && task.module === 'core.file.rendered'
    ? ['content', 'vars', 'template']
    : [name]) {
    const pair = pairs.find((p) => p.key.value === key);
    if (pair) return pair.key.pos;
  }
  return task.pos;
}

export function finish(
  plan: RenderPlan,
  scenario: Scenario,
  record: SecretRecord,
  handles: { key: Uint8Array; binding: string },
): RenderResult {
  const errors: RenderError[] = [];
  const main: Position = { file: `scenario/${plan.operation}/main.yml`, line: 1, col: 1 };
  const tasks = new Map(scenario.tasks.map((t) => [t.index, t]));
  const hosts = plan.hosts.map((h) => ({
    ...h,
    // A host's own input (per-host input) keeps references, as the plan's input does.
    ...(h.input ? { input: mapStrings(h.input, (s) => wholeRef(s, record) ?? s) as Record<string, unknown> } : {}),
    steps: h.steps.map((step): PlanStep => {
      const task = tasks.get(step.index);
      const entries: StepSecret[] = [];
      const nOf = new Map<string, number>();
      const handle = (token: string): string => {
        let n = nOf.get(token);
        if (n === undefined) {
          const ref = record.get(token)!;
          n = entries.length;
          nOf.set(token, n);
          entries.push(
            signHandle(
              handles.key,
              { binding: handles.binding, sid: h.sid, index: step.index, n },
              ref.path,
              ref.field,
            ),
          );
        }
        return handleMarker(n);
      };
      const params: Record<string, unknown> = {};
      for (const [name, v] of Object.entries(step.params)) {
        const at = paramPos(task, name, main);
        params[name] = mapStrings(v, (s) => {
          const seen = inspect(s, record);
          if (seen.problem === 'forged') {
            errors.push(
              makeError(
                at,
                RULE_SECRET_USE,
                `task "${step.name}": ${step.module} param "${name}" holds «secret: text that is not a secret this render gave the scenario; a secret reference cannot be made from text`,
                FORGED_FIX,
              ),
            );
            return s;
          }
          if (seen.problem === 'transformed') {
            errors.push(
              makeError(
                at,
                RULE_SECRET_USE,
                `task "${step.name}": a secret was transformed (only placing a secret in text works; functions such as upper or b64enc would see a placeholder)`,
                TRANSFORMED_FIX,
              ),
            );
            return s;
          }
          if (seen.tokens.length === 0) return s;
          // A secret may go only where no module output, diff or ledger entry ever repeats it: a file's content.
          if (!SECRET_PARAMS[step.module]?.includes(name)) {
            errors.push(
              makeError(
                at,
                RULE_SECRET_USE,
                `task "${step.name}": ${step.module} param "${name}" holds a secret; a secret can go only into a file's content`,
                'pass the secret in `content` (core.file.present) or in `vars` (core.file.rendered)',
              ),
            );
            return s;
          }
          return splitTokens(s)
            .parts.map((p) => (typeof p === 'string' ? p : handle(p.marker)))
            .join('');
        });
      }
      return entries.length > 0 ? { ...step, params, secrets: entries } : { ...step, params };
    }),
  }));

  // State keeps the reference of a secret; text built around one cannot be committed.
  const stateAt = (key: string): Position => scenario.stateSets.find((x) => x.key === key)?.pos ?? main;
  const sets = plan.stateChanges.sets.map((x) => ({
    key: x.key,
    value: mapStrings(x.value, (s) => {
      const whole = wholeRef(s, record);
      if (whole) return whole;
      const seen = inspect(s, record);
      if (seen.problem === 'forged') {
        errors.push(
          makeError(
            stateAt(x.key),
            RULE_SECRET_USE,
            `state_changes: "${x.key}" holds «secret: text that is not a secret this render gave the scenario; a secret reference cannot be made from text`,
            FORGED_FIX,
          ),
        );
      } else if (seen.problem || seen.tokens.length > 0) {
        errors.push(
          makeError(
            stateAt(x.key),
            RULE_SECRET_USE,
            'state_changes: a value mixes a secret into text; committed state may hold a reference, never a value',
            'set the state key to the secret alone (it is stored as its secretstore: reference)',
          ),
        );
      }
      return s;
    }),
  }));
  // The sets were checked above; the state they were applied to holds references already.
  const nextState = mapStrings(plan.nextState, (s) => wholeRef(s, record) ?? s) as Record<string, unknown>;
  const input = mapStrings(plan.input, (s) => wholeRef(s, record) ?? s) as Record<string, unknown>;
  if (errors.length > 0) return { ok: false, errors: sortErrors(dedupe(errors)) };
  return { ok: true, plan: { ...plan, input, stateChanges: { sets }, nextState, hosts } };
}

/** `secretstore:<path>#<field>` when `s` is exactly one marker of this record. */
function wholeRef(s: string, record: SecretRecord): string | null {
  if (!s.startsWith(SECRET_MARK)) return null;
  const { parts, bad } = splitTokens(s);
  const p = parts[0];
  if (bad || parts.length !== 1 || p === undefined || typeof p === 'string') return null;
  const ref = record.get(p.marker);
  return ref ? referenceText(ref) : null;
}

function dedupe(errors: RenderError[]): RenderError[] {
  const seen = new Set<string>();
  return errors.filter((e) => {
    const k = `${e.file}:${e.line}:${e.col}:${e.message}`;
    return !seen.has(k) && !!seen.add(k);
  });
}
