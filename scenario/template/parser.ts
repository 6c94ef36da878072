/**
 * Parser for Go text/template, following text/template/parse: control
 * structures (if/else if/else, range, with, define, template, block,
 * break/continue), pipelines with declarations, commands, chains and
 * literals. Like Go, it fails at parse time on an unknown function name or
 * an undefined variable, which is what lets soul-lint report them offline.
 */
import { lex, TemplateSyntaxError, type Token } from './lexer';
import type { Arg, Command, Node, Pipe, TemplateSet } from './ast';
import { unquoteGo, parseGoNumber } from './literals';

export function parseTemplate(src: string, hasFunction: (name: string) => boolean): TemplateSet {
  return new Parser(lex(src), hasFunction).parseAll();
}

type Stop = 'end' | 'else' | 'eof';

class Parser {
  private i = 0;
  private readonly set: TemplateSet = new Map();
  private vars: string[] = ['$'];
  private rangeDepth = 0;

  constructor(
    private readonly toks: Token[],
    private readonly hasFunction: (name: string) => boolean,
  ) {}

  parseAll(): TemplateSet {
    const { list, stop } = this.list(true);
    if (stop.kind !== 'eof') throw this.err(`unexpected {{${stop.kind}}}`, stop.offset);
    this.set.set('', list);
    return this.set;
  }

  private list(top: boolean): { list: Node[]; stop: { kind: Stop; offset: number } } {
    const list: Node[] = [];
    for (;;) {
      const t = this.next();
      if (t.type === 'eof') {
        if (!top) throw this.err('unexpected EOF', t.offset);
        return { list, stop: { kind: 'eof', offset: t.offset } };
      }
      if (t.type === 'text') {
        list.push({ type: 'text', text: t.value, offset: t.offset });
        continue;
      }
      // t is `{{`
      const k = this.peekNonSpace();
      if (k.type === 'keyword') {
        this.nextNonSpace();
        switch (k.value) {
          case 'end':
            this.expectRight('end');
            return { list, stop: { kind: 'end', offset: k.offset } };
          case 'else':
            return { list, stop: { kind: 'else', offset: k.offset } };
          case 'if':
          case 'with':
            list.push(this.branch(k.value, k.offset));
            continue;
          case 'range':
            list.push(this.range(k.offset));
            continue;
          case 'template':
            list.push(this.templateCall(k.offset));
            continue;
          case 'block':
            list.push(this.block(k.offset));
            continue;
          case 'define':
            if (!top) throw this.err('unexpected <define> in command', k.offset);
            this.define(k.offset);
            continue;
          case 'break':
          case 'continue':
            if (this.rangeDepth === 0) throw this.err(`{{${k.value}}} outside {{range}}`, k.offset);
            this.expectRight(k.value);
            list.push({ type: k.value, offset: k.offset });
            continue;
        }
      }
      list.push({ type: 'action', pipe: this.pipeline('command', 'right'), offset: t.offset });
    }
  }

  private branch(kind: 'if' | 'with', offset: number): Node {
    const saved = this.vars.length;
    const pipe = this.pipeline(kind, 'right');
    const { list, stop } = this.list(false);
    let elseList: Node[] | null = null;
    if (stop.kind === 'else') {
      const n = this.peekNonSpace();
      if (n.type === 'keyword' && n.value === kind) {
        // `{{else if ...}}` is `{{else}}{{if ...}}...{{end}}` sharing the outer {{end}}.
        this.nextNonSpace();
        elseList = [this.branch(kind, n.offset)];
      } else {
        this.expectRight('else');
        const r = this.list(false);
        if (r.stop.kind !== 'end') throw this.err('expected end; found {{else}}', r.stop.offset);
        elseList = r.list;
      }
    }
    this.vars.length = saved;
    return { type: kind, pipe, list, elseList, offset };
  }

  private range(offset: number): Node {
    const saved = this.vars.length;
    const pipe = this.pipeline('range', 'right');
    this.rangeDepth++;
    const { list, stop } = this.list(false);
    this.rangeDepth--;
    let elseList: Node[] | null = null;
    if (stop.kind === 'else') {
      this.expectRight('else');
      const r = this.list(false);
      if (r.stop.kind !== 'end') throw this.err('expected end; found {{else}}', r.stop.offset);
      elseList = r.list;
    }
    this.vars.length = saved;
    return { type: 'range', pipe, list, elseList, offset };
  }

  private templateName(context: string): string {
    const t = this.nextNonSpace();
    if (t.type !== 'string' && t.type !== 'rawstring')
      throw this.err(`unexpected "${t.value}" in ${context} clause`, t.offset);
    return unquoteGo(t.value, t.offset);
  }

  private templateCall(offset: number): Node {
    const name = this.templateName('template');
    const t = this.peekNonSpace();
    const pipe = t.type === 'right' ? (this.nextNonSpace(), null) : this.pipeline('template', 'right');
    return { type: 'template', name, pipe, offset };
  }

  private block(offset: number): Node {
    const name = this.templateName('block');
    const pipe = this.pipeline('block', 'right');
    this.defineBody(name, offset);
    return { type: 'template', name, pipe, offset };
  }

  private define(offset: number): void {
    const name = this.templateName('define');
    this.expectRight('define');
    this.defineBody(name, offset);
  }

  private defineBody(name: string, offset: number): void {
    const savedVars = this.vars;
    this.vars = ['$'];
    const { list, stop } = this.list(false);
    if (stop.kind !== 'end') throw this.err(`unexpected {{${stop.kind}}} in define`, stop.offset);
    this.vars = savedVars;
    if (this.set.has(name) && this.set.get(name)!.some((n) => n.type !== 'text' || n.text.trim() !== '')) {
      throw this.err(`template: multiple definition of template "${name}"`, offset);
    }
    this.set.set(name, list);
  }

  private pipeline(context: string, end: 'right' | 'rparen'): Pipe {
    const start = this.peekNonSpace();
    const pipe: Pipe = { isAssign: false, decl: [], cmds: [], offset: start.offset };
    // Declarations: `$x :=`, `$x =`, and in range `$i, $e :=`.
    const save = this.i;
    const v = this.nextNonSpace();
    if (v.type === 'variable') {
      const op = this.nextNonSpace();
      if (op.type === 'declare' || op.type === 'assign') {
        pipe.isAssign = op.type === 'assign';
        pipe.decl.push(v.value);
        if (pipe.isAssign && !this.vars.includes(v.value)) throw this.err(`undefined variable "${v.value}"`, v.offset);
      } else if (op.type === 'comma' && context === 'range') {
        const v2 = this.nextNonSpace();
        const op2 = this.nextNonSpace();
        if (v2.type !== 'variable' || (op2.type !== 'declare' && op2.type !== 'assign'))
          throw this.err('range can only initialize variables', v2.offset);
        pipe.isAssign = op2.type === 'assign';
        pipe.decl.push(v.value, v2.value);
      } else this.i = save;
    } else this.i = save;
    for (;;) {
      const t = this.peekNonSpace();
      if (t.type === end) {
        this.nextNonSpace();
        if (pipe.cmds.length === 0) throw this.err(`missing value for ${context}`, t.offset);
        for (const d of pipe.decl) if (!pipe.isAssign) this.vars.push(d);
        return pipe;
      }
      if (t.type === 'eof' || t.type === 'right' || t.type === 'rparen') throw this.err(`unclosed action`, t.offset);
      const cmd = this.command(end);
      if (pipe.cmds.length > 0) {
        const first = cmd.args[0]!;
        if (['bool', 'dot', 'nil', 'number', 'string'].includes(first.type)) {
          throw this.err(`non executable command in pipeline stage ${pipe.cmds.length + 1}`, first.offset);
        }
      }
      pipe.cmds.push(cmd);
    }
  }

  private command(end: 'right' | 'rparen'): Command {
    const cmd: Command = { args: [], offset: this.peekNonSpace().offset };
    for (;;) {
      const t = this.peekNonSpace();
      if (t.type === end || t.type === 'pipe') {
        if (cmd.args.length === 0) throw this.err('missing value for command', t.offset);
        if (t.type === 'pipe') this.nextNonSpace();
        return cmd;
      }
      if (t.type === 'right' || t.type === 'rparen' || t.type === 'eof')
        throw this.err(`unexpected "${t.value}" in operand`, t.offset);
      if (cmd.args.length > 0 && this.toks[this.i]!.type !== 'space') throw this.err(`missing space?`, t.offset);
      this.nextNonSpace();
      cmd.args.push(this.operand(t));
    }
  }

  private operand(t: Token): Arg {
    let arg = this.term(t);
    const names: string[] = [];
    while (this.toks[this.i]!.type === 'field') names.push(this.toks[this.i++]!.value.slice(1));
    if (names.length === 0) return arg;
    if (arg.type === 'field') return { ...arg, names: [...arg.names, ...names] };
    if (arg.type === 'variable') return { ...arg, names: [...arg.names, ...names] };
    if (['bool', 'string', 'number', 'nil', 'dot'].includes(arg.type))
      throw this.err(`unexpected . after term "${t.value}"`, t.offset);
    arg = { type: 'chain', node: arg, names, offset: t.offset };
    return arg;
  }

  private term(t: Token): Arg {
    switch (t.type) {
      case 'identifier':
        if (!this.hasFunction(t.value)) throw this.err(`function "${t.value}" not defined`, t.offset);
        return { type: 'identifier', name: t.value, offset: t.offset };
      case 'dot':
        return { type: 'dot', offset: t.offset };
      case 'nil':
        return { type: 'nil', offset: t.offset };
      case 'bool':
        return { type: 'bool', value: t.value === 'true', offset: t.offset };
      case 'field':
        return { type: 'field', names: [t.value.slice(1)], offset: t.offset };
      case 'variable':
        if (!this.vars.includes(t.value)) throw this.err(`undefined variable "${t.value}"`, t.offset);
        return { type: 'variable', name: t.value, names: [], offset: t.offset };
      case 'string':
      case 'rawstring':
        return { type: 'string', value: unquoteGo(t.value, t.offset), offset: t.offset };
      case 'char':
      case 'number': {
        const n = parseGoNumber(t.value, t.type === 'char', t.offset);
        return { type: 'number', value: n.value, isFloat: n.isFloat, text: t.value, offset: t.offset };
      }
      case 'lparen': {
        const pipe = this.pipeline('parenthesized pipeline', 'rparen');
        return { type: 'pipe', pipe, offset: t.offset };
      }
      default:
        throw this.err(`unexpected "${t.value}" in operand`, t.offset);
    }
  }

  private expectRight(context: string): void {
    const t = this.nextNonSpace();
    if (t.type !== 'right') throw this.err(`unexpected "${t.value}" in ${context}`, t.offset);
  }

  private next(): Token {
    return this.toks[this.i++] ?? this.toks[this.toks.length - 1]!;
  }

  private nextNonSpace(): Token {
    let t = this.next();
    while (t.type === 'space') t = this.next();
    return t;
  }

  private peekNonSpace(): Token {
    let j = this.i;
    while (this.toks[j]?.type === 'space') j++;
    return this.toks[j] ?? this.toks[this.toks.length - 1]!;
  }

  private err(message: string, offset: number): TemplateSyntaxError {
    return new TemplateSyntaxError(message, offset);
  }
}
