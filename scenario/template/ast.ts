/**
 * Parse tree of a template, shaped like Go's text/template/parse nodes.
 * Offsets point into the template source so errors carry line:col.
 */
export type Node =
  | { type: 'text'; text: string; offset: number }
  | { type: 'action'; pipe: Pipe; offset: number }
  | { type: 'if' | 'with'; pipe: Pipe; list: Node[]; elseList: Node[] | null; offset: number }
  | { type: 'range'; pipe: Pipe; list: Node[]; elseList: Node[] | null; offset: number }
  | { type: 'template'; name: string; pipe: Pipe | null; offset: number }
  | { type: 'break' | 'continue'; offset: number };

export interface Pipe {
  /** `:=` declares, `=` assigns; both bind `decl` variables. */
  isAssign: boolean;
  decl: string[];
  cmds: Command[];
  offset: number;
}

export interface Command {
  args: Arg[];
  offset: number;
}

export type Arg =
  | { type: 'field'; names: string[]; offset: number }
  | { type: 'variable'; name: string; names: string[]; offset: number }
  | { type: 'identifier'; name: string; offset: number }
  | { type: 'dot'; offset: number }
  | { type: 'nil'; offset: number }
  | { type: 'bool'; value: boolean; offset: number }
  | { type: 'string'; value: string; offset: number }
  | { type: 'number'; value: number; isFloat: boolean; text: string; offset: number }
  | { type: 'chain'; node: Arg; names: string[]; offset: number }
  | { type: 'pipe'; pipe: Pipe; offset: number };

/** Named templates from `define`/`block` plus the main one (name ""). */
export type TemplateSet = Map<string, Node[]>;
