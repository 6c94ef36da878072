/**
 * Offline checks of secret use (soul-lint and the load before every render):
 * SL023 a `secretstore(...)` path outside the prefixes service.yml declares
 * under `secrets:`, or a path that is not a string literal (the repository
 * must show what it reads); SL024 a `secret: true` input that is not a
 * string, or whose default is not a `secretstore:<path>#<field>` reference.
 */
import { parseReference } from '../../common/secret';
import { makeError, type RenderError } from '../errors';
import type { LoadedService, Scenario } from '../model';
import type { YNode, YScalar } from '../yaml/parse';
import { posInScalar } from '../check/positions';
import { RULE_SECRET_PATH, RULE_SECRET_USE, policyProblem } from './context';

const CALL = /\bsecretstore\s*\(/g;
const LITERAL_ARGS = /^\s*(?:"([^"\\]*)"|'([^'\\]*)')\s*,\s*(?:"([^"\\]*)"|'([^'\\]*)')\s*\)/;

export function checkSecrets(service: LoadedService): RenderError[] {
  const prefixes = service.secretPrefixes ?? [];
  const out: RenderError[] = [];
  for (const s of service.scenarios.values()) {
    out.push(...checkInputs(s, prefixes));
    for (const node of scalarsOf(s)) out.push(...checkCalls(node, prefixes));
  }
  return out;
}

function checkInputs(s: Scenario, prefixes: string[]): RenderError[] {
  const out: RenderError[] = [];
  for (const d of s.inputs.values()) {
    if (!d.secret) continue;
    if (d.type !== 'string') {
      out.push(
        makeError(
          d.pos,
          RULE_SECRET_USE,
          `secret input "${d.name}" has type ${d.type}; a secret is a string`,
          'declare it `type: string`',
        ),
      );
    }
    if (!d.hasDefault) continue;
    const ref = typeof d.default === 'string' ? parseReference(d.default) : null;
    if (!ref) {
      out.push(
        makeError(
          d.defaultNode!.pos,
          RULE_SECRET_USE,
          `the default of secret input "${d.name}" is a value; a repository holds references, never secret values`,
          'write the default as secretstore:<path>#<field>, or remove it',
        ),
      );
      continue;
    }
    const problem = policyProblem(ref, { servicePrefixes: prefixes });
    if (problem)
      out.push(
        makeError(d.defaultNode!.pos, RULE_SECRET_PATH, `secret input "${d.name}": ${problem}`, fixFor(prefixes)),
      );
  }
  return out;
}

function checkCalls(node: YScalar, prefixes: string[]): RenderError[] {
  const out: RenderError[] = [];
  const text = node.text;
  for (const m of text.matchAll(CALL)) {
    const at = m.index!;
    const args = LITERAL_ARGS.exec(text.slice(at + m[0].length));
    if (!args) {
      out.push(
        makeError(
          posInScalar(node, at),
          RULE_SECRET_PATH,
          'secretstore(...) takes string literals: the repository must show which secret it reads',
          'write secretstore("<path>", "<field>") with both arguments quoted',
        ),
      );
      continue;
    }
    const ref = { path: args[1] ?? args[2]!, field: args[3] ?? args[4]! };
    const problem = policyProblem(ref, { servicePrefixes: prefixes });
    if (problem)
      out.push(
        makeError(
          posInScalar(node, at),
          RULE_SECRET_PATH,
          `secretstore(${JSON.stringify(ref.path)}, ${JSON.stringify(ref.field)}): ${problem}`,
          fixFor(prefixes),
        ),
      );
  }
  return out;
}

function fixFor(prefixes: string[]): string {
  return prefixes.length
    ? 'read a path under a declared prefix, or add its prefix to service.yml `secrets:` (reviewed with the repository)'
    : 'declare the prefixes this service reads in service.yml, e.g. `secrets: [secret/keeper/services/<service>/]`';
}

/** Every scalar of a scenario an expression can sit in. */
function scalarsOf(s: Scenario): YScalar[] {
  const out: YScalar[] = [];
  const walk = (n: YNode | undefined): void => {
    if (!n) return;
    if (n.kind === 'scalar') {
      if (typeof n.value === 'string' && n.text.includes('secretstore')) out.push(n);
      return;
    }
    if (n.kind === 'seq') n.items.forEach(walk);
    else n.pairs.forEach((p) => walk(p.value));
  };
  for (const set of s.stateSets) walk(set.node);
  for (const t of s.tasks) {
    walk(t.params);
    for (const e of [t.when, t.changedWhen, t.failedWhen, t.until, t.where]) if (e) walk(e.node);
  }
  if (s.where) walk(s.where.node);
  return out;
}
