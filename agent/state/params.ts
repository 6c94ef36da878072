// Small, strict readers for step params. Params arrive already resolved from the keeper, so any
// surprise (a typo'd key, a number where a string belongs) is a bug to report, not to guess around.

export class ParamError extends Error {
  override readonly name = 'ParamError';
}

export type Params = Record<string, unknown>;

/** The params object, refusing keys the module does not know (catches "contents" for "content"). */
export function readParams(raw: unknown, allowed: readonly string[]): Params {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new ParamError('params must be an object');
  const unknown = Object.keys(raw).filter((k) => !allowed.includes(k));
  if (unknown.length > 0) {
    throw new ParamError(
      `unknown param${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => `"${k}"`).join(', ')}; allowed: ${allowed.join(', ')}`,
    );
  }
  return raw as Params;
}

export function requireString(p: Params, key: string): string {
  const v = p[key];
  if (typeof v !== 'string') throw new ParamError(`param "${key}" is required and must be a string`);
  return v;
}

export function optionalString(p: Params, key: string): string | undefined {
  const v = p[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new ParamError(`param "${key}" must be a string`);
  return v;
}
