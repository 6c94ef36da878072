/**
 * Executes a parsed template with Go text/template semantics and
 * `missingkey=error`. Two kinds of "nothing" are kept apart as Go keeps
 * them: `null` is a nil inside the data (a valid interface{} holding nil),
 * `undefined` is Go's invalid reflect.Value (a pipeline that produced nil,
 * an absent `template` argument). Both reach builtins and interface{}
 * parameters as nil; a string or int parameter refuses both, like Go.
 *
 * Work is bounded by a step budget, a wall-clock budget, an output size
 * limit and a `template` nesting depth (see ../limits.ts).
 */
import type { Arg, Command, Node, Pipe, TemplateSet } from './ast';
import { FuncError, type FuncMap, type ParamKind } from './funcs';
import { formatValue, isTrue, kindOf, sortedKeys, typeName, GoFloat } from './values';
import { LIMITS } from '../limits';

export class TemplateExecError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
    this.name = 'TemplateExecError';
  }
}

class BreakSignal {
  constructor(readonly cont: boolean) {}
}

const MISSING = Symbol('missing');
type Final = unknown | typeof MISSING;

export interface ExecOptions {
  funcs: FuncMap;
  maxSteps?: number;
  maxMillis?: number;
  maxDepth?: number;
  maxOutput?: number;
}

export function executeTemplate(set: TemplateSet, name: string, data: unknown, opts: ExecOptions): string {
  const list = set.get(name);
  if (!list) throw new TemplateExecError(`no such template "${name}"`, 0);
  const st = new State(set, opts);
  st.vars = [{ name: '$', value: data }];
  st.walkList(data, list);
  return st.out.join('');
}

class State {
  out: string[] = [];
  private outLen = 0;
  vars: Array<{ name: string; value: unknown }> = [];
  private steps = 0;
  private depth = 0;
  private readonly deadline: number;
  private readonly maxSteps: number;
  private readonly maxDepth: number;
  private readonly maxOutput: number;

  constructor(
    private readonly set: TemplateSet,
    private readonly opts: ExecOptions,
  ) {
    this.deadline = Date.now() + (opts.maxMillis ?? LIMITS.maxTemplateMillis);
    this.maxSteps = opts.maxSteps ?? LIMITS.maxTemplateSteps;
    this.maxDepth = opts.maxDepth ?? LIMITS.maxTemplateDepth;
    this.maxOutput = opts.maxOutput ?? LIMITS.maxTemplateOutputBytes;
  }

  private tick(offset: number): void {
    if (++this.steps > this.maxSteps)
      throw new TemplateExecError(`template exceeded its budget of ${this.maxSteps} steps`, offset);
    if ((this.steps & 1023) === 0 && Date.now() > this.deadline)
      throw new TemplateExecError('template exceeded its time budget', offset);
  }

  private write(s: string, offset: number): void {
    this.outLen += s.length;
    if (this.outLen > this.maxOutput)
      throw new TemplateExecError(`template output exceeds ${this.maxOutput} bytes`, offset);
    this.out.push(s);
  }

  walkList(dot: unknown, list: Node[]): void {
    for (const n of list) this.walk(dot, n);
  }

  private walk(dot: unknown, n: Node): void {
    this.tick(n.offset);
    switch (n.type) {
      case 'text':
        this.write(n.text, n.offset);
        return;
      case 'action': {
        const v = this.evalPipeline(dot, n.pipe);
        if (n.pipe.decl.length === 0)
          this.write(v === null || v === undefined ? '<no value>' : formatValue(v), n.offset);
        return;
      }
      case 'if':
      case 'with': {
        const mark = this.vars.length;
        const v = this.evalPipeline(dot, n.pipe);
        if (isTrue(v)) this.walkList(n.type === 'with' ? v : dot, n.list);
        else if (n.elseList) this.walkList(dot, n.elseList);
        this.vars.length = mark;
        return;
      }
      case 'range':
        return this.walkRange(dot, n);
      case 'template': {
        const list = this.set.get(n.name);
        if (!list) throw new TemplateExecError(`no such template "${n.name}"`, n.offset);
        if (this.depth >= this.maxDepth)
          throw new TemplateExecError(`exceeded maximum template depth (${this.maxDepth})`, n.offset);
        const newDot = n.pipe ? this.evalPipeline(dot, n.pipe) : undefined;
        const saved = this.vars;
        this.vars = [{ name: '$', value: newDot }];
        this.depth++;
        try {
          this.walkList(newDot, list);
        } finally {
          this.depth--;
          this.vars = saved;
        }
        return;
      }
      case 'break':
      case 'continue':
        throw new BreakSignal(n.type === 'continue');
    }
  }

  private walkRange(dot: unknown, n: Extract<Node, { type: 'range' }>): void {
    const mark = this.vars.length;
    const v = this.evalPipeline(dot, { ...n.pipe, decl: [] });
    // Iterated lazily: `range 100000000` must hit the step budget, not allocate.
    let count = 0;
    let items: Iterable<[unknown, unknown]>;
    switch (kindOf(v)) {
      case 'slice':
        count = (v as unknown[]).length;
        items = (v as unknown[]).map((e, i) => [i, e] as [unknown, unknown]);
        break;
      case 'map': {
        const keys = sortedKeys(v as object);
        count = keys.length;
        items = keys.map((k) => [k, (v as Record<string, unknown>)[k]] as [unknown, unknown]);
        break;
      }
      case 'int':
        if (n.pipe.decl.length > 1)
          throw new TemplateExecError(`can't use ${v as number} to iterate over more than one variable`, n.offset);
        count = Math.max(0, v as number);
        items = (function* () {
          for (let i = 0; i < count; i++) yield [i, i] as [unknown, unknown];
        })();
        break;
      case 'nil':
        items = [];
        break;
      default:
        throw new TemplateExecError(`range can't iterate over ${formatValue(v)}`, n.offset);
    }
    if (count === 0) {
      if (n.elseList) this.walkList(dot, n.elseList);
      this.vars.length = mark;
      return;
    }
    for (const [key, elem] of items) {
      this.tick(n.offset);
      const inner = this.vars.length;
      if (n.pipe.decl.length === 1) this.setDecl(n.pipe, n.pipe.decl[0]!, elem);
      if (n.pipe.decl.length === 2) {
        this.setDecl(n.pipe, n.pipe.decl[0]!, key);
        this.setDecl(n.pipe, n.pipe.decl[1]!, elem);
      }
      try {
        this.walkList(elem, n.list);
      } catch (e) {
        if (!(e instanceof BreakSignal)) throw e;
        if (!e.cont) {
          this.vars.length = inner;
          break;
        }
      }
      this.vars.length = inner;
    }
    this.vars.length = mark;
  }

  private setDecl(pipe: Pipe, name: string, value: unknown): void {
    if (!pipe.isAssign) {
      this.vars.push({ name, value });
      return;
    }
    for (let i = this.vars.length - 1; i >= 0; i--)
      if (this.vars[i]!.name === name) {
        this.vars[i]!.value = value;
        return;
      }
    throw new TemplateExecError(`undefined variable: ${name}`, pipe.offset);
  }

  evalPipeline(dot: unknown, pipe: Pipe): unknown {
    let value: Final = MISSING;
    for (const cmd of pipe.cmds) {
      value = this.evalCommand(dot, cmd, value);
      // Like Go, a nil interface result becomes "no value".
      if (value === null) value = undefined;
    }
    for (const d of pipe.decl) this.setDecl(pipe, d, value);
    return value;
  }

  private evalCommand(dot: unknown, cmd: Command, final: Final): unknown {
    this.tick(cmd.offset);
    const first = cmd.args[0]!;
    switch (first.type) {
      case 'field':
        return this.evalFieldChain(dot, dot, first.names, cmd.args, final, first.offset);
      case 'chain': {
        if (first.node.type === 'nil') throw new TemplateExecError('indirection through explicit nil', first.offset);
        const recv = this.evalArg(dot, 'any', first.node);
        return this.evalFieldChain(dot, recv, first.names, cmd.args, final, first.offset);
      }
      case 'identifier':
        return this.evalCall(dot, first.name, cmd.args.slice(1), final, first.offset);
      case 'variable': {
        const v = this.lookupVar(first.name, first.offset);
        if (first.names.length === 0) {
          this.notAFunction(cmd.args, final, first.offset);
          return v;
        }
        return this.evalFieldChain(dot, v, first.names, cmd.args, final, first.offset);
      }
      case 'pipe':
        this.notAFunction(cmd.args, final, first.offset);
        return this.evalPipeline(dot, first.pipe);
      case 'nil':
        throw new TemplateExecError('nil is not a command', first.offset);
      case 'dot':
        this.notAFunction(cmd.args, final, first.offset);
        return dot;
      default:
        this.notAFunction(cmd.args, final, first.offset);
        return this.literal(first);
    }
  }

  private notAFunction(args: Arg[], final: Final, offset: number): void {
    if (args.length > 1 || final !== MISSING)
      throw new TemplateExecError("can't give argument to non-function", offset);
  }

  private literal(a: Arg): unknown {
    switch (a.type) {
      case 'dot':
        return undefined;
      case 'bool':
        return a.value;
      case 'string':
        return a.value;
      case 'number':
        return a.isFloat ? (Number.isInteger(a.value) ? new GoFloat(a.value) : a.value) : a.value;
      default:
        return undefined;
    }
  }

  private lookupVar(name: string, offset: number): unknown {
    for (let i = this.vars.length - 1; i >= 0; i--) if (this.vars[i]!.name === name) return this.vars[i]!.value;
    throw new TemplateExecError(`undefined variable: ${name}`, offset);
  }

  private evalFieldChain(
    _dot: unknown,
    receiver: unknown,
    names: string[],
    args: Arg[],
    final: Final,
    offset: number,
  ): unknown {
    let r = receiver;
    for (let i = 0; i < names.length; i++) {
      const last = i === names.length - 1;
      const hasArgs = last && (args.length > 1 || final !== MISSING);
      r = this.evalField(names[i]!, r, hasArgs, offset);
    }
    return r;
  }

  private evalField(name: string, receiver: unknown, hasArgs: boolean, offset: number): unknown {
    if (receiver === undefined) throw new TemplateExecError(`nil data; no entry for key "${name}"`, offset);
    if (receiver === null) throw new TemplateExecError(`nil pointer evaluating interface {}.${name}`, offset);
    if (kindOf(receiver) === 'map') {
      if (hasArgs) throw new TemplateExecError(`${name} is not a method but has arguments`, offset);
      if (!Object.prototype.hasOwnProperty.call(receiver, name))
        throw new TemplateExecError(`map has no entry for key "${name}"`, offset);
      return (receiver as Record<string, unknown>)[name];
    }
    throw new TemplateExecError(`can't evaluate field ${name} in type ${typeName(receiver)}`, offset);
  }

  private evalCall(dot: unknown, name: string, argNodes: Arg[], final: Final, offset: number): unknown {
    const f = this.opts.funcs.get(name);
    if (!f) throw new TemplateExecError(`"${name}" is not a defined function`, offset);
    const numIn = argNodes.length + (final !== MISSING ? 1 : 0);
    if (f.variadic !== undefined ? numIn < f.params.length : numIn !== f.params.length) {
      const want = f.variadic !== undefined ? `at least ${f.params.length}` : `${f.params.length}`;
      throw new TemplateExecError(`wrong number of args for ${name}: want ${want} got ${numIn}`, offset);
    }
    const kindAt = (i: number): ParamKind => f.params[i] ?? f.variadic!;
    if (f.lazy) {
      let v: unknown;
      for (const a of argNodes) {
        v = this.evalArg(dot, 'value', a);
        if (isTrue(v) === (name === 'or')) return v;
      }
      if (final !== MISSING) v = this.validate(final, 'value', offset);
      return v;
    }
    const args = argNodes.map((a, i) => this.evalArg(dot, kindAt(i), a));
    if (final !== MISSING) args.push(this.validate(final, kindAt(argNodes.length), offset));
    try {
      return f.fn(...args);
    } catch (e) {
      if (e instanceof FuncError) throw new TemplateExecError(`error calling ${name}: ${e.message}`, offset);
      throw e;
    }
  }

  /** Go's evalArg: literals are converted by parameter type, other nodes are evaluated then type-checked. */
  private evalArg(dot: unknown, kind: ParamKind, a: Arg): unknown {
    this.tick(a.offset);
    switch (a.type) {
      case 'dot':
        return this.validate(dot, kind, a.offset);
      case 'nil':
        if (kind === 'any' || kind === 'value') return null;
        throw new TemplateExecError(`cannot assign nil to ${kind}`, a.offset);
      case 'field':
        return this.validate(this.evalFieldChain(dot, dot, a.names, [a], MISSING, a.offset), kind, a.offset);
      case 'variable': {
        const v = this.lookupVar(a.name, a.offset);
        return this.validate(
          a.names.length ? this.evalFieldChain(dot, v, a.names, [a], MISSING, a.offset) : v,
          kind,
          a.offset,
        );
      }
      case 'pipe':
        return this.validate(this.evalPipeline(dot, a.pipe), kind, a.offset);
      case 'identifier':
        return this.validate(this.evalCall(dot, a.name, [], MISSING, a.offset), kind, a.offset);
      case 'chain':
        return this.validate(this.evalCommand(dot, { args: [a], offset: a.offset }, MISSING), kind, a.offset);
    }
    // Literals.
    if (kind === 'string') {
      if (a.type !== 'string') throw new TemplateExecError(`expected string; found ${describe(a)}`, a.offset);
      return a.value;
    }
    if (kind === 'int') {
      if (a.type !== 'number' || !Number.isInteger(a.value))
        throw new TemplateExecError(`expected integer; found ${describe(a)}`, a.offset);
      return a.value;
    }
    return this.literal(a);
  }

  private validate(v: unknown, kind: ParamKind, offset: number): unknown {
    if (v === undefined) {
      if (kind === 'any' || kind === 'value') return null;
      throw new TemplateExecError(`invalid value; expected ${kind}`, offset);
    }
    if (kind === 'string' && typeof v !== 'string')
      throw new TemplateExecError(`wrong type for value; expected string; got ${typeName(v)}`, offset);
    if (kind === 'int' && kindOf(v) !== 'int')
      throw new TemplateExecError(`wrong type for value; expected int; got ${typeName(v)}`, offset);
    return v;
  }
}

function describe(a: Arg): string {
  switch (a.type) {
    case 'string':
      return JSON.stringify(a.value);
    case 'number':
      return a.text;
    case 'bool':
      return String(a.value);
    default:
      return a.type;
  }
}
