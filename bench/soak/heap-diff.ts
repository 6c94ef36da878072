// What a process kept between two V8 heap snapshots (bench only: the soak's `--heap-snapshots`,
// bench/soak/inspector-gc.ts takeHeapSnapshot):
//   node dist/bench/soak/heap-diff.js BEFORE.heapsnapshot AFTER.heapsnapshot [--top N]
// Objects are counted by class (DevTools' "constructor": an object's constructor name, a closure's
// function name, otherwise the node type) and, within each class, by what holds them (the first
// strong retainer's class and the edge's name); the classes that grew most come first, each with
// the retainers that hold more of it. No dependency: the snapshot is the
// documented JSON (nodes and edges as flat integer arrays described by snapshot.meta).
import fs from 'node:fs';

interface Snapshot {
  snapshot: {
    meta: {
      node_fields: string[];
      node_types: [string[], ...unknown[]];
      edge_fields: string[];
      edge_types: [string[]];
    };
  };
  nodes: number[];
  edges: number[];
  strings: string[];
}

export interface HeapIndex {
  /** Per node (by its ordinal): its id, class, self size and first retainer ("class.edge"). */
  ids: Float64Array;
  classes: string[];
  sizes: Float64Array;
  retainers: string[];
}

const NAMED = new Set(['object', 'closure', 'native', 'regexp']);

/** The per-node facts of a parsed snapshot. */
export function indexSnapshot(s: Snapshot): HeapIndex {
  const m = s.snapshot.meta;
  const nf = m.node_fields.length;
  const [fType, fName, fId, fSize, fEdges] = ['type', 'name', 'id', 'self_size', 'edge_count'].map((f) =>
    m.node_fields.indexOf(f),
  ) as [number, number, number, number, number];
  const ef = m.edge_fields.length;
  const [eType, eName, eTo] = ['type', 'name_or_index', 'to_node'].map((f) => m.edge_fields.indexOf(f)) as [
    number,
    number,
    number,
  ];
  const nodeTypes = m.node_types[0];
  const edgeTypes = m.edge_types[0];
  const count = s.nodes.length / nf;
  const ids = new Float64Array(count);
  const sizes = new Float64Array(count);
  const classes: string[] = new Array(count);
  for (let i = 0; i < count; i++) {
    const at = i * nf;
    const type = nodeTypes[s.nodes[at + fType]!]!;
    ids[i] = s.nodes[at + fId]!;
    sizes[i] = s.nodes[at + fSize]!;
    classes[i] = NAMED.has(type) ? `${s.strings[s.nodes[at + fName]!]}` : `(${type})`;
  }
  // The first retainer met of each node; weak edges do not keep anything alive, so they are skipped.
  const retainers: string[] = new Array(count).fill('(root)');
  const seen = new Uint8Array(count);
  let edge = 0;
  for (let i = 0; i < count; i++) {
    const n = s.nodes[i * nf + fEdges]!;
    for (let k = 0; k < n; k++, edge += ef) {
      const type = edgeTypes[s.edges[edge + eType]!];
      if (type === 'weak') continue;
      const to = s.edges[edge + eTo]! / nf;
      if (seen[to]) continue;
      seen[to] = 1;
      // Slots of an array or a hash table (numbered, whatever the edge type) are one retainer: "[]".
      const name = type === 'element' || type === 'hidden' ? '' : `${s.strings[s.edges[edge + eName]!]}`;
      retainers[to] = `${classes[i]}.${name === '' || /^\d+$/.test(name) ? '[]' : name}`;
    }
  }
  return { ids, classes, sizes, retainers };
}

export interface Growth {
  class: string;
  count_before: number;
  count_after: number;
  bytes_before: number;
  bytes_after: number;
  /** What holds this class's objects, by how much more it holds in `after` than in `before`. */
  growth_by_retainer: { retainer: string; count: number; bytes: number }[];
}

type Tally = Map<string, { count: number; bytes: number; by: Map<string, { count: number; bytes: number }> }>;

function tally(h: HeapIndex): Tally {
  const t: Tally = new Map();
  for (let i = 0; i < h.classes.length; i++) {
    const c = t.get(h.classes[i]!) ?? { count: 0, bytes: 0, by: new Map() };
    c.count += 1;
    c.bytes += h.sizes[i]!;
    const r = c.by.get(h.retainers[i]!) ?? { count: 0, bytes: 0 };
    r.count += 1;
    r.bytes += h.sizes[i]!;
    c.by.set(h.retainers[i]!, r);
    t.set(h.classes[i]!, c);
  }
  return t;
}

/**
 * Classes whose self size grew most from `a` to `b`, each with the retainers that hold more of it.
 * Counted by class and retainer rather than by object id: the inspector gives ids afresh to a new
 * session, and the soak opens one per snapshot.
 */
export function compareHeaps(a: HeapIndex, b: HeapIndex, top = 25): Growth[] {
  const before = tally(a);
  const after = tally(b);
  const names = new Set([...before.keys(), ...after.keys()]);
  return [...names]
    .map((name) => {
      const x = before.get(name);
      const y = after.get(name);
      const retainers = new Set([...(x?.by.keys() ?? []), ...(y?.by.keys() ?? [])]);
      return {
        class: name,
        count_before: x?.count ?? 0,
        count_after: y?.count ?? 0,
        bytes_before: x?.bytes ?? 0,
        bytes_after: y?.bytes ?? 0,
        growth_by_retainer: [...retainers]
          .map((retainer) => ({
            retainer,
            count: (y?.by.get(retainer)?.count ?? 0) - (x?.by.get(retainer)?.count ?? 0),
            bytes: (y?.by.get(retainer)?.bytes ?? 0) - (x?.by.get(retainer)?.bytes ?? 0),
          }))
          .filter((r) => r.bytes > 0)
          .sort((p, q) => q.bytes - p.bytes)
          .slice(0, 5),
      };
    })
    .sort((p, q) => q.bytes_after - q.bytes_before - (p.bytes_after - p.bytes_before))
    .slice(0, top);
}

function main(): void {
  const args = process.argv.slice(2);
  const topAt = args.indexOf('--top');
  const top = topAt >= 0 ? Number(args.splice(topAt, 2)[1]) : 25;
  if (args.length !== 2) {
    console.error('usage: node dist/bench/soak/heap-diff.js BEFORE.heapsnapshot AFTER.heapsnapshot [--top N]');
    process.exit(2);
  }
  const [a, b] = args.map((f) => indexSnapshot(JSON.parse(fs.readFileSync(f!, 'utf8')) as Snapshot));
  const total = (h: HeapIndex) => h.sizes.reduce((s, x) => s + x, 0);
  const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
  console.log(
    `self size ${kb(total(a!))} -> ${kb(total(b!))} (${kb(total(b!) - total(a!))}); nodes ${a!.ids.length} -> ${b!.ids.length}`,
  );
  for (const g of compareHeaps(a!, b!, top)) {
    console.log(
      `${g.class}: ${g.count_before} -> ${g.count_after} objects, ${kb(g.bytes_before)} -> ${kb(g.bytes_after)} (${kb(g.bytes_after - g.bytes_before)})`,
    );
    for (const r of g.growth_by_retainer)
      console.log(`    held by ${r.retainer}: +${r.count} objects, +${kb(r.bytes)}`);
  }
}

if (require.main === module) main();
