/**
 * A run's input merged over the incarnation's last input (issue 30): an operator changes one value
 * without repeating the others, and without an optional value silently falling back to its
 * default because it was left out. Named keys replace, the rest stay; `null` removes a key, so an
 * optional input goes back to its default (a required one is then refused as missing, by the
 * run's up-front check). `replace` is the older rule: the given input is the whole input.
 * Secret inputs in the last input are references already (api/secret-inputs.ts): they stay
 * referenced without being given again.
 */

export type InputMode = 'merge' | 'replace';

export interface MergedInput {
  /** The input the run (or plan) uses and reports. */
  input: Record<string, unknown>;
  /** Keys taken from the last input unchanged (what keeperctl says it kept). */
  kept: string[];
  /** Keys the caller gave a value (new or replaced). */
  set: string[];
  /** Keys the caller removed with `null`. */
  removed: string[];
}

export function mergeInput(
  last: Record<string, unknown> | undefined,
  given: Record<string, unknown> | undefined,
  mode: InputMode = 'merge',
): MergedInput {
  const base = mode === 'replace' && given !== undefined ? {} : { ...(last ?? {}) };
  const set: string[] = [];
  const removed: string[] = [];
  for (const [k, v] of Object.entries(given ?? {})) {
    if (v === null) {
      delete base[k];
      removed.push(k);
    } else {
      base[k] = v;
      set.push(k);
    }
  }
  const kept = Object.keys(base).filter((k) => !set.includes(k));
  return { input: base, kept, set, removed };
}
