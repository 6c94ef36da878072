/**
 * SL025: a `core.file.rendered` template reads a top-level field (`.greeting`,
 * `$.greeting`) that the task's `vars` can never provide. The template's data
 * is exactly `vars`, so when `vars` is written out as a map (its keys are
 * never interpolated) or left out, the fields it offers are known offline and
 * the first real run would fail at render with "no entry for key". Fields read
 * under `with`/`range` (another dot) or inside named templates are not judged.
 */
import * as path from 'node:path';
import { makeError, type RenderError } from '../errors';
import type { LoadedService, Task } from '../model';
import type { Arg, Node, Pipe } from '../template/ast';
import { LineIndex } from '../yaml/line-index';
import { pair } from '../yaml/node';

export const RULE_TEMPLATE_VARS = 'SL025';

interface Read {
  name: string;
  offset: number;
}

/** Top-level field reads of the template's main body where dot is still the data itself. */
function rootReads(nodes: Node[], out: Read[], dotIsRoot: boolean): void {
  for (const n of nodes) {
    switch (n.type) {
      case 'action':
        pipeReads(n.pipe, out, dotIsRoot);
        break;
      case 'if':
        pipeReads(n.pipe, out, dotIsRoot);
        rootReads(n.list, out, dotIsRoot);
        if (n.elseList) rootReads(n.elseList, out, dotIsRoot);
        break;
      case 'with':
      case 'range':
        pipeReads(n.pipe, out, dotIsRoot);
        // Inside, dot is the pipe's value; `$` still names the data.
        rootReads(n.list, out, false);
        if (n.elseList) rootReads(n.elseList, out, dotIsRoot);
        break;
      case 'template':
        if (n.pipe) pipeReads(n.pipe, out, dotIsRoot);
        break;
      default:
        break;
    }
  }
}

function pipeReads(p: Pipe, out: Read[], dotIsRoot: boolean): void {
  for (const c of p.cmds) for (const a of c.args) argReads(a, out, dotIsRoot);
}

function argReads(a: Arg, out: Read[], dotIsRoot: boolean): void {
  if (a.type === 'field' && dotIsRoot && a.names.length > 0) out.push({ name: a.names[0]!, offset: a.offset });
  else if (a.type === 'variable' && a.name === '$' && a.names.length > 0)
    out.push({ name: a.names[0]!, offset: a.offset });
  else if (a.type === 'chain') argReads(a.node, out, dotIsRoot);
  else if (a.type === 'pipe') pipeReads(a.pipe, out, dotIsRoot);
}

export function checkTemplateVars(service: LoadedService, t: Task): RenderError[] {
  if (t.module !== 'core.file.rendered' || t.params?.kind !== 'map') return [];
  const tpl = pair(t.params, 'template');
  if (!tpl || tpl.value.kind !== 'scalar' || typeof tpl.value.value !== 'string' || tpl.value.text.includes('${'))
    return [];
  const file = service.templates.get(path.posix.normalize(tpl.value.value));
  const main = file?.set?.get('');
  if (!file || !main) return [];
  const vars = pair(t.params, 'vars');
  // `vars: "${...}"` is a value known at render only: nothing to judge offline.
  if (vars && vars.value.kind !== 'map') return [];
  const offered = new Set(vars && vars.value.kind === 'map' ? vars.value.pairs.map((p) => String(p.key.value)) : []);
  // A looped task's template also sees the item (render adds them beside `vars`).
  const loopNames = t.loop ? ['item', 'index'] : [];
  const reads: Read[] = [];
  rootReads(main, reads, true);
  const lines = new LineIndex(file.source, file.file);
  const out: RenderError[] = [];
  const seen = new Set<string>();
  for (const r of reads) {
    if (offered.has(r.name) || loopNames.includes(r.name) || seen.has(r.name)) continue;
    seen.add(r.name);
    const at = lines.pos(r.offset);
    out.push(
      makeError(
        vars ? vars.key.pos : tpl.key.pos,
        RULE_TEMPLATE_VARS,
        `template ${file.file}:${at.line}:${at.col} reads .${r.name}, which the task's vars never provide (${offered.size ? `vars: ${[...offered].join(', ')}` : 'no vars'})`,
        `add "${r.name}" under the task's vars, or guard the read in the template`,
      ),
    );
  }
  return out;
}
