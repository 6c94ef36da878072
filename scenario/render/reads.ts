/**
 * What one host's render read of its facts (docs/plans.md "Apply exactly the plan"): a plan is stale
 * on a host only when a fact its render read has changed since, so a transient address, a new
 * container interface or a DHCP lease does not refuse a reviewed plan that never looked at them.
 *
 * Reads are recorded per top-level fact (`soulprint.self.addresses` records `addresses`, whatever
 * part of it was read) by a Proxy over the host's soulprint, the object CEL, templates' vars and
 * `on: coven:` selectors read. A key looked for and absent counts too (`has(soulprint.self.x)`: x
 * appearing later changes the answer). Anything that lists the keys (`soulprint.self.size()`, a
 * comprehension over it, the whole map as a value) reads every fact: `ALL_FACTS`.
 */
import { isDeepStrictEqual } from 'node:util';

/** Recorded when the render listed the facts' keys: every fact counts. */
export const ALL_FACTS = '*';

/** Prototype names (`constructor`, `toString`, ...) a library asks of any object; never facts. */
const notFacts = new Set(Object.getOwnPropertyNames(Object.prototype));

export interface FactReads {
  /** The soulprint as the render reads it (plain values, for selectors). */
  plain: Record<string, unknown>;
  /** The same facts already converted to CEL values, for `soulprint.self`. */
  cel: Record<string, unknown>;
  /** The facts read so far, sorted; [ALL_FACTS] when the keys were listed. */
  read(): string[];
}

export function trackFacts(plain: Record<string, unknown>, cel: Record<string, unknown>): FactReads {
  const seen = new Set<string>();
  let all = false;
  const note = (k: string | symbol) => {
    if (typeof k === 'string' && !notFacts.has(k)) seen.add(k);
  };
  const handler: ProxyHandler<Record<string, unknown>> = {
    get(t, k, r) {
      // cel-js asks every map for its `constructor`; a fact of that name is still read by its descriptor.
      note(k);
      return Reflect.get(t, k, r);
    },
    has(t, k) {
      note(k);
      return Reflect.has(t, k);
    },
    getOwnPropertyDescriptor(t, k) {
      note(k);
      return Reflect.getOwnPropertyDescriptor(t, k);
    },
    ownKeys(t) {
      all = true;
      return Reflect.ownKeys(t);
    },
  };
  return {
    plain: new Proxy(plain, handler),
    cel: new Proxy(cel, handler),
    read: () => (all ? [ALL_FACTS] : [...seen].sort()),
  };
}

const brief = (v: unknown) => {
  const s = v === null || v === undefined ? 'nothing' : JSON.stringify(v);
  return s.length > 240 ? `${s.slice(0, 240)}…` : s;
};

/**
 * The facts render read for a host against its facts now, one clause per fact that differs; [] when
 * they match. `read` null (a plan stored before reads were recorded) compares every fact.
 */
export function factsDrift(
  planned: Record<string, unknown> | null,
  now: Record<string, unknown> | null,
  read: readonly string[] | null,
): string[] {
  if (planned === null || now === null) return [];
  const keys =
    read === null || read.includes(ALL_FACTS)
      ? [...new Set([...Object.keys(planned), ...Object.keys(now)])].sort()
      : [...read].sort();
  return keys
    .filter((k) => !isDeepStrictEqual(planned[k], now[k]))
    .map((k) => `fact ${k}: the plan rendered with ${brief(planned[k])}, now ${brief(now[k])}`);
}
