/**
 * Meaning checks of a loaded service, run offline by soul-lint and before
 * every render: input defaults, modules and their parameters, expressions
 * and the names they read, template references, register and requisites,
 * and migrations. Each problem carries its rule id (table in
 * docs/soul-lint.md), position and fix.
 */
import { makeError, type RenderError } from '../errors';
import type { LoadedService, Migration, Scenario, Task } from '../model';
import { matchesType, describeValue, inputTypes } from '../inputs';
import { checkValue, schemaProblems } from '../input-schema';
import { checkExprSource, checkInterpolations, type ScopeInfo } from './expressions';
import { checkTaskParams } from './params';
import { environmentFor, type Scope } from '../cel/env';
import { gateDurationProblem } from '../gate';

export const RULES = {
  inputDefault: 'SL008',
  inputSchema: 'SL007',
  references: 'SL016',
  selector: 'SL007',
  budget: 'SL031',
  gate: 'SL032',
  migration: 'SL018',
} as const;

const RESERVED = new Set(['input', 'state', 'soulprint', 'result', 'self', 'item', 'index']);
const SELECTOR = /^(coven:[A-Za-z0-9._-]+|[A-Za-z0-9.*?_-]+)$/;

export function checkService(service: LoadedService): RenderError[] {
  const out: RenderError[] = [];
  for (const s of service.scenarios.values()) out.push(...checkScenario(service, s));
  for (const m of service.migrations.values()) {
    const info: ScopeInfo = {
      scope: scope(new Map(), { soulprint: false }),
      allRegistered: [],
      where: 'in a migration',
    };
    for (const set of m.stateSets) out.push(...checkInterpolations(set.node, info));
    out.push(...checkMigrationKeys(m));
  }
  return out;
}

const overlaps = (a: string, b: string) => a === b || a.startsWith(`${b}.`) || b.startsWith(`${a}.`);

/**
 * SL018: a migration changes something, and no two of its parts touch the same key (or one inside
 * the other): `unsets: [a]` with `sets: {a.b: ...}`, a move onto a key that is set, two moves to
 * one key, a key moved into itself. Each would depend on the order the parts run in.
 */
function checkMigrationKeys(m: Migration): RenderError[] {
  if (m.stateSets.length + m.unsets.length + m.moves.length === 0)
    return [
      makeError(
        m.pos,
        RULES.migration,
        `${m.file} changes nothing: state_changes has no sets, unsets or moves`,
        'add state_changes.sets, unsets or moves',
      ),
    ];
  const named: Array<{ key: string; role: string; pos: Migration['pos'] }> = [
    ...m.moves.flatMap((mv) => [
      { key: mv.from.key, role: 'moved from', pos: mv.from.pos },
      { key: mv.to.key, role: 'moved to', pos: mv.to.pos },
    ]),
    ...m.unsets.map((u) => ({ key: u.key, role: 'unset', pos: u.pos })),
    ...m.stateSets.map((x) => ({ key: x.key, role: 'set', pos: x.pos })),
  ];
  const out: RenderError[] = [];
  for (let i = 0; i < named.length; i++) {
    for (let j = 0; j < i; j++) {
      const a = named[j]!;
      const b = named[i]!;
      // Sets among themselves may fill one mapping key by key (a.x, a.y), as they always could.
      if ((a.role === 'set' && b.role === 'set') || !overlaps(a.key, b.key)) continue;
      out.push(
        makeError(
          b.pos,
          RULES.migration,
          `state key "${b.key}" is ${b.role} and "${a.key}" is ${a.role} in the same migration`,
          'touch each key once per migration (moves run first, then unsets, then sets); split it into two migrations if both are needed',
        ),
      );
      break;
    }
  }
  return out;
}

function scope(inputs: Scenario['inputs'], opts: Partial<Omit<Scope, 'inputs'>>): Scope {
  return { inputs: inputTypes(inputs), soulprint: true, state: true, registered: [], result: false, ...opts };
}

function checkScenario(service: LoadedService, s: Scenario): RenderError[] {
  const out: RenderError[] = [];
  for (const d of s.inputs.values()) {
    if (d.hasDefault && !matchesType(d.default, d.type)) {
      out.push(
        makeError(
          d.defaultNode!.pos,
          RULES.inputDefault,
          `default of input "${d.name}" is ${describeValue(d.default)}, but its type is ${d.type}`,
          `change the default to ${d.type === 'integer' ? 'an' : 'a'} ${d.type} value or change the type`,
        ),
      );
    } else if (d.schema) {
      const broken = schemaProblems(d.schema, `input.${d.name}`);
      for (const p of broken)
        out.push(
          makeError(
            d.pos,
            RULES.inputSchema,
            `input "${d.name}": ${p.message}`,
            'fix the schema of the input (docs/scenario.md "Input schemas")',
          ),
        );
      // A default the schema refuses would be refused in every run that leaves the input out.
      if (broken.length === 0 && d.hasDefault) {
        for (const p of checkValue(d.default, d.schema, `input.${d.name}`)) {
          out.push(
            makeError(
              d.defaultNode!.pos,
              RULES.inputDefault,
              `default of input "${d.name}" breaks its schema: ${p.message}`,
              'change the default or the schema',
            ),
          );
        }
      }
    }
  }
  const allRegistered = s.tasks.flatMap((t) => (t.register ? [t.register.name] : []));
  // A task with `loop:` registers a list (one result per item).
  const lists = s.tasks.flatMap((t) => (t.register && t.loop ? [t.register.name] : []));
  const hostScope = (where: string, registered: string[] = [], result = false, loop = false): ScopeInfo => ({
    scope: scope(s.inputs, {
      registered,
      result,
      ...(loop ? { loop } : {}),
      ...(lists.some((n) => registered.includes(n)) ? { lists: lists.filter((n) => registered.includes(n)) } : {}),
    }),
    allRegistered,
    where,
  });
  if (s.where) out.push(...checkExprSource(s.where, hostScope('in the scenario `where:`'), true));
  out.push(...checkBudget(s));
  out.push(...checkGate(s));
  // The health check reads what failed_when of a last task would: every registered result.
  if (s.gate?.health) out.push(...checkExprSource(s.gate.health, hostScope('in `gate: health:`', allRegistered), true));
  out.push(...checkSelectors(s.on));
  const stateInfo: ScopeInfo = {
    scope: scope(s.inputs, { soulprint: false }),
    allRegistered,
    where: 'in state_changes',
  };
  for (const set of s.stateSets) out.push(...checkInterpolations(set.node, stateInfo));

  const byName = new Map<string, Task>();
  const registered: string[] = [];
  for (const t of s.tasks) {
    if (byName.has(t.name)) {
      out.push(
        makeError(
          t.pos,
          RULES.references,
          `duplicate task name "${t.name}"`,
          'give every task a unique name; requisites refer to tasks by name',
        ),
      );
    }
    const looped = t.loop !== undefined;
    if (t.loop) out.push(...checkLoop(t.loop, hostScope('in `loop:` (the list is made at render time)')));
    out.push(
      ...checkTaskParams(service, t, hostScope('in `params` (params are resolved at render time)', [], false, looped)),
    );
    if (t.when) out.push(...checkExprSource(t.when, hostScope('in `when:`', [...registered], false, looped), true));
    if (t.where) out.push(...checkExprSource(t.where, hostScope('in a task `where:`'), true));
    for (const [e, key] of [
      [t.changedWhen, 'changed_when'],
      [t.failedWhen, 'failed_when'],
      [t.until, 'until'],
    ] as const) {
      if (e) out.push(...checkExprSource(e, hostScope(`in \`${key}:\``, [...registered], true, looped), true));
    }
    out.push(...checkSelectors(t.on));
    for (const ref of [...t.require, ...t.onchanges]) {
      const target = byName.get(ref.name);
      if (!target) {
        const later = s.tasks.some((x) => x.name === ref.name);
        out.push(
          makeError(
            ref.pos,
            RULES.references,
            later ? `requisite "${ref.name}" names this task or a later one` : `requisite "${ref.name}" names no task`,
            later ? 'a requisite must name an earlier task; move the task up' : 'use the `name` of an earlier task',
          ),
        );
      }
    }
    if (t.register) {
      if (RESERVED.has(t.register.name)) {
        out.push(
          makeError(
            t.register.pos,
            RULES.references,
            `register name "${t.register.name}" is reserved`,
            'choose another name',
          ),
        );
      } else if (registered.includes(t.register.name)) {
        out.push(
          makeError(
            t.register.pos,
            RULES.references,
            `register name "${t.register.name}" is already used by an earlier task`,
            'use a unique name',
          ),
        );
      } else registered.push(t.register.name);
    }
    if (!byName.has(t.name)) byName.set(t.name, t);
  }
  return out;
}

/** A loop's expression reads what params read and must be a list when its type is known offline. */
function checkLoop(loop: NonNullable<Task['loop']>, info: ScopeInfo): RenderError[] {
  if (loop.kind === 'list') return checkInterpolations(loop.node, info);
  const found = checkExprSource(loop.expr, info, false);
  if (found.length) return found;
  if (typeof loop.expr.node.value !== 'string') {
    return [
      makeError(
        loop.pos,
        'SL022',
        `loop must be a list, but it is ${String(loop.expr.node.value)}`,
        'give `loop:` a YAML list or a CEL expression giving a list',
      ),
    ];
  }
  const t = environmentFor(info.scope).check(loop.expr.src).type;
  if (t && t !== 'dyn' && !/^list/.test(t)) {
    return [
      makeError(
        loop.pos,
        'SL022',
        `loop must be a list, but the expression is ${t}`,
        'give `loop:` a YAML list or a CEL expression giving a list, e.g. input.names',
      ),
    ];
  }
  return [];
}

function checkSelectors(on: Scenario['on']): RenderError[] {
  if (!on) return [];
  return on.selectors
    .filter((sel) => !SELECTOR.test(sel))
    .map((sel) =>
      makeError(
        on.pos,
        RULES.selector,
        `invalid host selector "${sel}" in \`on:\``,
        'use a SID, a SID glob like "*.db.example.com", or "coven:<name>"',
      ),
    );
}

/** A gate (docs/runs.md "Gates between batches"): its shape is SL007's; these are gates that cannot apply. */
function checkGate(s: Scenario): RenderError[] {
  const g = s.gate;
  if (!g) return [];
  const out: RenderError[] = [];
  if (!s.serial)
    out.push(
      makeError(
        g.pos,
        RULES.gate,
        '`gate:` without `serial:`: the run is one batch, there is nothing to wait between',
        'add `serial:` (a host count or "P%") or remove `gate:`',
      ),
    );
  if (!g.health && !g.approval)
    out.push(
      makeError(
        g.pos,
        RULES.gate,
        '`gate:` waits for nothing: it has no `health:` and no `approval: true`',
        'add `health: <CEL>` or `approval: true`, or remove `gate:`',
      ),
    );
  for (const key of ['timeout', 'interval'] as const) {
    const v = g[key];
    if (!v) continue;
    if (!g.health)
      out.push(
        makeError(
          v.pos,
          RULES.gate,
          `\`gate: ${key}:\` without \`health:\`: only a health check is timed`,
          `remove \`${key}:\``,
        ),
      );
    const problem = gateDurationProblem(key, v.value);
    if (problem)
      out.push(makeError(v.pos, RULES.gate, `\`gate: ${key}:\` ${problem}`, 'write a duration like 60s, 2s or 10m'));
  }
  return out;
}

/** The failure budget (docs/runs.md): its shape is SL007's; these are budgets that cannot apply. */
function checkBudget(s: Scenario): RenderError[] {
  const out: RenderError[] = [];
  if (s.maxFailedUnknown && !s.maxFailed) {
    out.push(
      makeError(
        s.maxFailedUnknown.pos,
        RULES.budget,
        '`max_failed_unknown:` without `max_failed:`: with no budget every unknown host stops the run',
        'add `max_failed:` (a host count or "P%") or remove `max_failed_unknown:`',
      ),
    );
  }
  // A committed destroy removes the incarnation: hosts it failed on would be left behind unlisted.
  if (s.maxFailed && s.operation === 'destroy') {
    out.push(
      makeError(
        s.maxFailed.pos,
        RULES.budget,
        '`max_failed:` in the destroy scenario: a destroy has no failure budget, every host must succeed',
        'remove `max_failed:`',
      ),
    );
  }
  return out;
}
