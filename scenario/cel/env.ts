/**
 * The CEL environments used by scenarios, built on @marcbachmann/cel-js (the
 * choice and its measurement are in docs/scenario.md). Every name an
 * expression may read is declared; an undeclared name is a check error, and a
 * missing key at evaluation is an evaluation error, never an empty value.
 *
 * `input` is declared with one field per declared input, so `input.typo` is
 * caught offline. `soulprint` must be read as `soulprint.self.<path>`; a
 * bare `soulprint.<path>` is refused by an AST walk, because the reserved
 * `soulprint.<other host>` form is not part of the language yet.
 */
import { Environment } from '@marcbachmann/cel-js';
import type { ASTNode } from '@marcbachmann/cel-js';
import { LIMITS } from '../limits';
import { secretstoreFunction } from '../secrets/context';
// Installs RE2 `matches` on cel-js before any environment evaluates (regex.ts).
import { patternProblem } from './regex';

export type InputType = 'string' | 'integer' | 'number' | 'boolean' | 'list' | 'map';

const CEL_TYPE: Record<InputType, string> = {
  string: 'string',
  integer: 'int',
  number: 'double',
  boolean: 'bool',
  list: 'list',
  map: 'map',
};

export interface Scope {
  /** Declared inputs and their types. */
  inputs: Map<string, InputType>;
  /** Whether `soulprint.self.*` is readable (per-host contexts). */
  soulprint: boolean;
  /** Whether `state.*` is readable. */
  state: boolean;
  /** Registered result names readable here (earlier tasks). */
  registered: string[];
  /** Whether `result` (the current step's own result) is readable. */
  result: boolean;
  /** In a task with `loop:`: `item` (the element, any type) and `index` (its position from 0)
   *  are readable. (`loop`, Jinja's name, is a reserved word of CEL.) */
  loop?: boolean;
  /** Registered names that hold a list (a task with `loop:` registers one result per item). */
  lists?: string[];
}

/** The cache key of a scope: everything that changes which names and types are declared. */
export function scopeKeyOf(scope: Scope): string {
  return JSON.stringify([
    [...scope.inputs],
    scope.soulprint,
    scope.state,
    scope.registered,
    scope.result,
    scope.loop === true,
    scope.lists ?? [],
  ]);
}

export interface CheckProblem {
  /** Offset into the expression source. */
  offset: number;
  message: string;
  kind: 'syntax' | 'name' | 'type';
}

const cache = new Map<string, Environment>();

export function environmentFor(scope: Scope): Environment {
  const key = scopeKeyOf(scope);
  let env = cache.get(key);
  if (env) return env;
  env = new Environment({
    homogeneousAggregateLiterals: false,
    unlistedVariablesAreDyn: false,
    limits: { maxAstNodes: 2000, maxDepth: 64, maxListElements: 1000, maxMapEntries: 1000, maxCallArguments: 32 },
  });
  // `secretstore(path, field)` gives a marker, never a value (scenario/secrets/context.ts).
  env.registerFunction('secretstore(string, string): string', secretstoreFunction);
  const schema: Record<string, string> = {};
  for (const [name, type] of scope.inputs) schema[name] = CEL_TYPE[type];
  env.registerVariable({ name: 'input', schema });
  if (scope.soulprint) env.registerVariable('soulprint', 'map');
  if (scope.state) env.registerVariable('state', 'map');
  const lists = new Set(scope.lists ?? []);
  for (const name of scope.registered) env.registerVariable(name, lists.has(name) ? 'list' : 'map');
  if (scope.result) env.registerVariable('result', 'map');
  if (scope.loop) {
    env.registerVariable('item', 'dyn');
    env.registerVariable('index', 'int');
  }
  if (cache.size > 256) cache.clear();
  cache.set(key, env);
  return env;
}

/** Syntax, declared names, the soulprint.self rule and types. Returns null when the expression is fine. */
export function checkExpression(src: string, scope: Scope): CheckProblem | null {
  if (src.length > LIMITS.maxExpressionLength) {
    return { offset: 0, message: `expression is longer than ${LIMITS.maxExpressionLength} characters`, kind: 'syntax' };
  }
  const env = environmentFor(scope);
  let ast: ASTNode;
  try {
    ast = env.parse(src).ast;
  } catch (e) {
    return { offset: rangeStart(e), message: `CEL syntax error: ${summary(e)}`, kind: 'syntax' };
  }
  const bare = findBareSoulprint(ast);
  if (bare !== null) {
    return {
      offset: bare,
      message: 'a bare `soulprint.<path>` is not allowed; read host facts as `soulprint.self.<path>`',
      kind: 'name',
    };
  }
  const result = env.check(src);
  if (!result.valid && result.error) {
    const msg = summary(result.error);
    const kind = /Unknown variable|No such key/.test(msg) ? 'name' : 'type';
    return {
      offset: rangeStart(result.error),
      message: kind === 'name' ? `undeclared name: ${msg}` : `CEL type error: ${msg}`,
      kind,
    };
  }
  const pattern = findBadPattern(ast);
  if (pattern !== null) return { offset: pattern.offset, message: pattern.message, kind: 'syntax' };
  return null;
}

/**
 * The first `x.matches('<literal>')` whose literal pattern evaluation would refuse (not RE2, or over
 * a limit), so the checker (soul-lint, a scenario's load, a fact query) reports it with its place
 * before any host is evaluated. A pattern computed at evaluation is checked when it is used.
 */
function findBadPattern(root: ASTNode): { offset: number; message: string } | null {
  const seen = new Set<unknown>();
  let found: { offset: number; message: string } | null = null;
  const walk = (x: unknown): void => {
    if (found !== null || x === null || typeof x !== 'object' || seen.has(x)) return;
    seen.add(x);
    if (Array.isArray(x)) {
      for (const c of x) walk(c);
      return;
    }
    const node = x as { op?: unknown; args?: unknown; start?: number };
    if (node.op === 'rcall' && Array.isArray(node.args) && node.args[0] === 'matches') {
      const args = node.args[2] as { op?: string; args?: unknown; start?: number }[] | undefined;
      const lit = args?.length === 1 ? args[0] : undefined;
      if (lit?.op === 'value' && typeof lit.args === 'string') {
        const message = patternProblem(lit.args);
        if (message !== null) {
          found = { offset: lit.start ?? 0, message };
          return;
        }
      }
    }
    if ('args' in node) walk(node.args);
    else for (const v of Object.values(node)) walk(v);
  };
  walk(root);
  return found;
}

/** Offset of a `soulprint.x` selection whose field is not `self`, or null. */
function findBareSoulprint(node: ASTNode): number | null {
  const old = node.toOldStructure();
  let found: number | null = null;
  const walk = (n: unknown, ast: ASTNode | undefined): void => {
    if (found !== null || !Array.isArray(n)) return;
    if (
      (n[0] === '.' || n[0] === '.?') &&
      Array.isArray(n[1]) &&
      n[1][0] === 'id' &&
      n[1][1] === 'soulprint' &&
      n[2] !== 'self'
    ) {
      found = ast?.start ?? 0;
      return;
    }
    if (n[0] === '[]' && Array.isArray(n[1]) && n[1][0] === 'id' && n[1][1] === 'soulprint') {
      found = ast?.start ?? 0;
      return;
    }
    for (const c of n.slice(1)) walk(c, undefined);
  };
  walk(old, node);
  if (found !== null && found === 0) found = locate(node.input, /soulprint\s*(\.\s*(?!self\b)|\[)/);
  return found;
}

function locate(src: string, re: RegExp): number {
  const m = re.exec(src);
  return m ? m.index : 0;
}

export function rangeStart(e: unknown): number {
  const r = (e as { range?: { start: number } }).range;
  return r ? r.start : 0;
}

/** First line of a cel-js error message; the rest is a source excerpt we print ourselves. */
export function summary(e: unknown): string {
  const m = e instanceof Error ? e.message : String(e);
  return m.split('\n')[0]!.trim();
}
