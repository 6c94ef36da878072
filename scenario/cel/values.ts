/**
 * Conversion between the plain JSON-like values the keeper stores (inputs,
 * state, soulprints, plans) and CEL values. CEL separates int from double;
 * JSON does not. The rule: a JS number that is an integer becomes a CEL int
 * (BigInt), any other number a double. Back from CEL, ints become numbers
 * when they are safe integers and an error otherwise, so a plan never holds a
 * silently rounded number.
 */
export function toCel(value: unknown): unknown {
  if (typeof value === 'number') return Number.isInteger(value) ? BigInt(value) : value;
  if (Array.isArray(value)) return value.map(toCel);
  if (value !== null && typeof value === 'object' && !(value instanceof Uint8Array) && !(value instanceof Date)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = toCel(v);
    return out;
  }
  return value;
}

export function fromCel(value: unknown): unknown {
  if (typeof value === 'bigint') {
    if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER)) {
      throw new Error(`integer ${value} does not fit in a JSON number`);
    }
    return Number(value);
  }
  if (Array.isArray(value)) return value.map(fromCel);
  if (value instanceof Map) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of value) out[String(k)] = fromCel(v);
    return out;
  }
  if (value instanceof Date) return value.toISOString();
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  if (value !== null && typeof value === 'object') {
    const ctor = (value as object).constructor;
    if (ctor && ctor !== Object && 'value' in (value as object)) return fromCel((value as { value: unknown }).value);
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = fromCel(v);
    return out;
  }
  return value;
}

/** Text of a value when it is spliced into a larger string by `${...}` interpolation. */
export function interpolationText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value === null) return 'null';
  return JSON.stringify(value);
}
