/**
 * Builds the scenario and migration models from schema-valid YAML trees.
 * Shape was checked by the JSON schema already, so this only reads.
 */
import type { YNode, YScalar } from '../yaml/parse';
import { child, pair, toValue } from '../yaml/node';
import type { ExprSource, InputDecl, Migration, Scenario, ScenarioGate, StateSet, Task, TaskRef } from '../model';
import type { InputType } from '../cel/env';
import { reachesInside, schemaOf } from '../input-schema';

function expr(node: YNode | undefined): ExprSource | undefined {
  if (!node || node.kind !== 'scalar') return undefined;
  const src = typeof node.value === 'boolean' ? String(node.value) : node.text;
  return { src, pos: node.pos, node };
}

function refs(node: YNode | undefined): TaskRef[] {
  if (!node) return [];
  const items: YNode[] = node.kind === 'seq' ? node.items : [node];
  return items.filter((n): n is YScalar => n.kind === 'scalar').map((n) => ({ name: n.text, pos: n.pos }));
}

function selectors(node: YNode | undefined): { selectors: string[]; pos: YNode['pos'] } | undefined {
  if (!node) return undefined;
  return { selectors: refs(node).map((r) => r.name), pos: node.pos };
}

function stateSets(node: YNode | undefined): StateSet[] {
  const sets = child(node, 'sets');
  if (!sets || sets.kind !== 'map') return [];
  return sets.pairs.map((p) => ({ key: String(p.key.value), node: p.value, pos: p.key.pos }));
}

export function buildScenario(operation: string, file: string, root: YNode): Scenario {
  const inputs = new Map<string, InputDecl>();
  const inputNode = child(root, 'input');
  if (inputNode?.kind === 'map') {
    for (const p of inputNode.pairs) {
      const def = pair(p.value, 'default');
      const decl: InputDecl = {
        name: String(p.key.value),
        type: (child(p.value, 'type') as YScalar).text as InputType,
        hasDefault: def !== undefined,
        pos: p.key.pos,
      };
      if (def) {
        decl.default = toValue(def.value);
        decl.defaultNode = def.value;
      }
      if (toValue(pair(p.value, 'secret')?.value) === true) decl.secret = true;
      const schema = schemaOf(toValue(p.value) as Record<string, unknown>);
      if (reachesInside(schema)) decl.schema = schema;
      inputs.set(decl.name, decl);
    }
  }
  const tasksNode = child(root, 'tasks');
  const tasks: Task[] = (tasksNode?.kind === 'seq' ? tasksNode.items : []).map((t, index) => buildTask(t, index));
  const scenario: Scenario = { operation, file, inputs, stateSets: stateSets(child(root, 'state_changes')), tasks };
  const on = selectors(child(root, 'on'));
  if (on) scenario.on = on;
  const serial = child(root, 'serial');
  if (serial?.kind === 'scalar') scenario.serial = { value: serial.value as number | string, pos: serial.pos };
  const maxFailed = child(root, 'max_failed');
  if (maxFailed?.kind === 'scalar')
    scenario.maxFailed = { value: maxFailed.value as number | string, pos: maxFailed.pos };
  const unknownCounts = child(root, 'max_failed_unknown');
  if (unknownCounts?.kind === 'scalar')
    scenario.maxFailedUnknown = { value: unknownCounts.value !== false, pos: unknownCounts.pos };
  const gateNode = child(root, 'gate');
  if (gateNode?.kind === 'map') {
    const gate: ScenarioGate = { approval: toValue(child(gateNode, 'approval')) === true, pos: gateNode.pos };
    const health = expr(child(gateNode, 'health'));
    if (health) gate.health = health;
    for (const key of ['timeout', 'interval'] as const) {
      const n = child(gateNode, key);
      if (n?.kind === 'scalar') gate[key] = { value: String(n.value), pos: n.pos };
    }
    scenario.gate = gate;
  }
  const where = expr(child(root, 'where'));
  if (where) scenario.where = where;
  return scenario;
}

function buildTask(t: YNode, index: number): Task {
  const name = child(t, 'name') as YScalar;
  const module = child(t, 'module') as YScalar;
  const task: Task = {
    index,
    name: name.text,
    module: module.text,
    pos: t.pos,
    modulePos: module.pos,
    require: refs(child(t, 'require')),
    onchanges: refs(child(t, 'onchanges')),
  };
  const params = child(t, 'params');
  if (params) task.params = params;
  const keys: Array<[keyof Task, string]> = [
    ['when', 'when'],
    ['changedWhen', 'changed_when'],
    ['failedWhen', 'failed_when'],
    ['until', 'until'],
    ['where', 'where'],
  ];
  for (const [prop, key] of keys) {
    const e = expr(child(t, key));
    if (e) (task as unknown as Record<string, unknown>)[prop] = e;
  }
  const reg = child(t, 'register');
  if (reg?.kind === 'scalar') task.register = { name: reg.text, pos: reg.pos };
  const retries = child(t, 'retries');
  if (retries?.kind === 'scalar') task.retries = retries.value as number;
  const delay = child(t, 'delay');
  if (delay?.kind === 'scalar') task.delay = delay.value as number;
  const output = child(t, 'output');
  if (output?.kind === 'scalar' && output.text === 'safe') task.outputSafe = true;
  const on = selectors(child(t, 'on'));
  if (on) task.on = on;
  const loop = child(t, 'loop');
  if (loop?.kind === 'seq') task.loop = { kind: 'list', node: loop, pos: loop.pos };
  else if (loop?.kind === 'scalar') task.loop = { kind: 'expr', expr: expr(loop)!, pos: loop.pos };
  return task;
}

export function buildMigration(version: number, file: string, root: YNode): Migration {
  const changes = child(root, 'state_changes');
  const unsetsNode = child(changes, 'unsets');
  const movesNode = child(changes, 'moves');
  return {
    version,
    file,
    stateSets: stateSets(changes),
    unsets: (unsetsNode?.kind === 'seq' ? unsetsNode.items : [])
      .filter((n): n is YScalar => n.kind === 'scalar')
      .map((n) => ({ key: n.text, pos: n.pos })),
    moves: (movesNode?.kind === 'map' ? movesNode.pairs : []).map((p) => ({
      from: { key: String(p.key.value), pos: p.key.pos },
      to: { key: p.value.kind === 'scalar' ? (p.value as YScalar).text : '', pos: p.value.pos },
    })),
    pos: (changes ?? root).pos,
  };
}
