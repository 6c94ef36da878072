/**
 * Reading and removing a dotted key (`motd.message`) in a state mapping, copy-on-write like
 * setPath (render/targets.ts): the state a migration reads is never changed under it.
 */

type Mapping = Record<string, unknown>;
const isMapping = (v: unknown): v is Mapping => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The value at `key`, and whether it is there at all (a key may hold null). */
export function getPath(state: Mapping, key: string): { present: boolean; value?: unknown } {
  let at: unknown = state;
  for (const part of key.split('.')) {
    if (!isMapping(at) || !Object.hasOwn(at, part)) return { present: false };
    at = at[part];
  }
  return { present: true, value: at };
}

/** A copy without `key`; the same object when the key is not there. A mapping left empty stays (as `{}`). */
export function unsetPath(state: Mapping, key: string): Mapping {
  const [head, ...rest] = key.split('.') as [string, ...string[]];
  if (!Object.hasOwn(state, head)) return state;
  const copy = { ...state };
  if (rest.length === 0) {
    delete copy[head];
    return copy;
  }
  const inner = state[head];
  if (!isMapping(inner)) return state;
  copy[head] = unsetPath(inner, rest.join('.'));
  return copy;
}
