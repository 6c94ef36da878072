/**
 * Per-host input (issue 47): an incarnation's input for some hosts, by coven and by sid, as
 * Ansible's `host_vars`/`group_vars`, Salt's pillar per minion and Hiera per node give them. A host
 * gets the incarnation's input, then each of its covens' entries in the order of the incarnation's
 * `covens` (a later coven over an earlier one), then its own sid's entry, each merged by the rule
 * of a run's input (input-merge.ts): a named key replaces, `null` removes (back to the default).
 */
import { mergeInput } from './input-merge';

export interface HostInput {
  /** By sid. */
  hosts?: Record<string, Record<string, unknown>>;
  /** By coven (one of the incarnation's covens). */
  covens?: Record<string, Record<string, unknown>>;
}

/** Whether there is anything per host at all (an empty value is stored as none). */
export function hasHostInput(h: HostInput | null | undefined): h is HostInput {
  return !!h && (Object.keys(h.hosts ?? {}).length > 0 || Object.keys(h.covens ?? {}).length > 0);
}

/**
 * The layers one host gets, merged into one override (null kept: it removes the key from the
 * incarnation's input); undefined when none applies. `order` is the incarnation's covens.
 */
export function hostLayer(
  h: HostInput | null | undefined,
  host: { sid: string; covens: string[] },
  order: string[],
): Record<string, unknown> | undefined {
  if (!hasHostInput(h)) return undefined;
  const layers: Record<string, unknown>[] = [];
  for (const c of order) if (host.covens.includes(c) && h.covens?.[c]) layers.push(h.covens[c]!);
  const own = h.hosts?.[host.sid];
  if (own) layers.push(own);
  if (layers.length === 0) return undefined;
  return Object.assign({}, ...layers) as Record<string, unknown>;
}

/** The host's input: the incarnation's with its layer over it. */
export function inputFor(input: Record<string, unknown>, layer: Record<string, unknown> | undefined) {
  return layer ? mergeInput(input, layer).input : input;
}

/**
 * The layer's keys this operation declares. Per-host input serves every operation of the
 * incarnation, and an operation that does not declare a key (a `destroy` taking only `path`) does
 * not get it, as `destroy` gets only the inputs it declares of the incarnation's input.
 */
export function declaredOnly(
  layer: Record<string, unknown> | undefined,
  declared: { has(name: string): boolean },
): Record<string, unknown> | undefined {
  if (!layer) return undefined;
  const out = Object.fromEntries(Object.entries(layer).filter(([k]) => declared.has(k)));
  return Object.keys(out).length > 0 ? out : undefined;
}
