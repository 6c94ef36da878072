// A key-level diff of two state snapshots: objects are walked to their leaves (dotted paths), and
// arrays and scalars are compared whole, so a changed list shows as one changed key.
export type Change = { path: string; kind: 'added' | 'removed' | 'changed'; before?: unknown; after?: unknown };

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function leaves(v: unknown, prefix: string, out: Map<string, unknown>): void {
  if (isObject(v) && Object.keys(v).length > 0) {
    for (const [k, child] of Object.entries(v)) leaves(child, prefix === '' ? k : `${prefix}.${k}`, out);
  } else if (prefix !== '') {
    out.set(prefix, v);
  }
}

export function diffStates(before: unknown, after: unknown): Change[] {
  const a = new Map<string, unknown>();
  const b = new Map<string, unknown>();
  leaves(before, '', a);
  leaves(after, '', b);
  const changes: Change[] = [];
  for (const path of [...new Set([...a.keys(), ...b.keys()])].sort()) {
    if (!b.has(path)) changes.push({ path, kind: 'removed', before: a.get(path) });
    else if (!a.has(path)) changes.push({ path, kind: 'added', after: b.get(path) });
    else if (JSON.stringify(a.get(path)) !== JSON.stringify(b.get(path)))
      changes.push({ path, kind: 'changed', before: a.get(path), after: b.get(path) });
  }
  return changes;
}
