/**
 * Host selection. `on:` is a list of selectors: a SID, a SID glob (`*`,
 * `?`), or `coven:<name>` matched against the soulprint's `covens` list; a
 * host matches if any selector does. `serial:` splits the targeted hosts
 * into batches of N hosts, or of a percentage of them (rounded up).
 */
export function matchesSelectors(selectors: string[], sid: string, soulprint: Record<string, unknown>): boolean {
  const covens = Array.isArray(soulprint['covens']) ? (soulprint['covens'] as unknown[]).map(String) : [];
  return selectors.some((sel) => {
    if (sel.startsWith('coven:')) return covens.includes(sel.slice(6));
    const re = new RegExp(
      `^${sel
        .replace(/[.+^${}()|[\]\\]/g, '\\$&')
        .replace(/\*/g, '.*')
        .replace(/\?/g, '.')}$`,
    );
    return re.test(sid);
  });
}

export function batchSize(serial: number | string | undefined, hosts: number): number | null {
  if (serial === undefined) return null;
  if (typeof serial === 'number') return serial;
  const pct = Number(serial.replace('%', ''));
  return Math.max(1, Math.ceil((hosts * pct) / 100));
}

export function batches(sids: string[], size: number | null): string[][] {
  if (sids.length === 0) return [];
  if (size === null || size >= sids.length) return [sids];
  const out: string[][] = [];
  for (let i = 0; i < sids.length; i += size) out.push(sids.slice(i, i + size));
  return out;
}

/** Sets `a.b.c` in a copy-on-write way: objects along the path are copied. */
export function setPath(target: Record<string, unknown>, key: string, value: unknown): Record<string, unknown> {
  const [head, ...rest] = key.split('.');
  const copy = { ...target };
  if (rest.length === 0) copy[head!] = value;
  else {
    const inner = copy[head!];
    copy[head!] = setPath(
      inner !== null && typeof inner === 'object' && !Array.isArray(inner) ? (inner as Record<string, unknown>) : {},
      rest.join('.'),
      value,
    );
  }
  return copy;
}
