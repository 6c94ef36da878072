/**
 * Helpers over the positioned YAML tree: look a key up, follow a JSON
 * pointer (as ajv reports it) back to a node, and turn a node into a plain
 * value. Values are built with a budget so a shared (aliased) subtree cannot
 * blow up memory.
 */
import type { YMap, YNode, YPair } from './parse';
import type { Position } from '../errors';
import { ScenarioError } from '../errors';
import { LIMITS } from '../limits';

export function pair(map: YNode | null | undefined, key: string): YPair | undefined {
  if (!map || map.kind !== 'map') return undefined;
  return map.pairs.find((p) => p.key.value === key || p.key.text === key);
}

export function child(map: YNode | null | undefined, key: string): YNode | undefined {
  return pair(map, key)?.value;
}

/**
 * The node an ajv `instancePath` names (`/tasks/0/params/name`). With
 * `keyOfLast`, a missing last segment points at its parent, and an existing
 * one at its key, which is where an editor should put the cursor.
 */
export function nodeAtPointer(root: YNode, pointer: string, keyOfLast = false): { pos: Position } {
  const parts =
    pointer === ''
      ? []
      : pointer
          .slice(1)
          .split('/')
          .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  let node: YNode = root;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    if (node.kind === 'map') {
      const p = node.pairs.find((q) => String(q.key.value) === part);
      if (!p) return node;
      if (i === parts.length - 1 && keyOfLast) return p.key;
      node = p.value;
    } else if (node.kind === 'seq') {
      const item = node.items[Number(part)];
      if (!item) return node;
      node = item;
    } else {
      return node;
    }
  }
  return node;
}

/** Plain JS value of a node. Objects have no prototype tricks: `__proto__` keys were refused at parse time. */
export function toValue(node: YNode | null | undefined, budget = { left: LIMITS.maxYamlNodes }): unknown {
  if (!node) return null;
  if (--budget.left < 0) {
    throw new ScenarioError(
      node.pos,
      'SL001',
      `YAML value expands to more than ${LIMITS.maxYamlNodes} nodes`,
      'reduce aliases and nesting',
    );
  }
  switch (node.kind) {
    case 'scalar':
      return node.value;
    case 'seq':
      return node.items.map((n) => toValue(n, budget));
    case 'map': {
      const out: Record<string, unknown> = {};
      for (const p of (node as YMap).pairs) out[String(p.key.value)] = toValue(p.value, budget);
      return out;
    }
  }
}

export function describeKind(node: YNode): string {
  if (node.kind === 'map') return 'a mapping';
  if (node.kind === 'seq') return 'a list';
  return node.value === null ? 'null' : typeof node.value === 'string' ? 'a string' : `a ${typeof node.value}`;
}
