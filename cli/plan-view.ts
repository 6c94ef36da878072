// How keeperctl shows a plan (docs/plans.md) on the terminal: per host what would change, each
// changed step with its diff (the unified diff of a file, a package's from -> to), then a count.
// Hosts where nothing would change are listed in one line.

export interface PlanStep {
  index: number;
  name: string | null;
  module: string;
  status: string;
  would_change: boolean;
  output: string;
  skip_reason: string | null;
  diff: any;
}
export interface PlanHost {
  sid: string;
  status: string;
  reason: string | null;
  steps: PlanStep[];
}
export interface Plan {
  plan_id: string;
  incarnation: string;
  operation: string;
  status: string;
  error: string | null;
  expires_at: string;
  summary: any;
  hosts: PlanHost[];
}

function stepLines(s: PlanStep): string[] {
  const title = `  ${s.status === 'failed' ? 'x' : '~'} step ${s.index} (${s.name ?? s.module}): ${s.output.split('\n')[0]}`;
  const d = s.diff ?? {};
  const out = [title];
  if (typeof d.content?.unified === 'string')
    out.push(
      ...d.content.unified
        .replace(/\n$/, '')
        .split('\n')
        .map((l: string) => `      ${l}`),
    );
  // Digests are the keeper's keyed ones (docs/secrets.md "Diffs and hashes"), never a plain hash.
  else if (d.content?.secret === true)
    out.push(
      `      secret content changed: ${d.content.before?.digest?.slice(0, 12) ?? '(new)'} -> ${d.content.after?.digest?.slice(0, 12)}`,
    );
  else if (d.content)
    out.push(
      `      content ${d.content.before?.digest?.slice(0, 12) ?? '(new)'} -> ${d.content.after?.digest?.slice(0, 12)}${d.content.unified_withheld ? ` (diff withheld: ${d.content.unified_withheld})` : ' (diff withheld: the file may hold a secret)'}`,
    );
  for (const k of ['mode', 'owner', 'group'] as const)
    if (d[k] && typeof d[k] === 'object') out.push(`      ${k} ${d[k].from} -> ${d[k].to}`);
  if (d.package) out.push(`      package ${d.package} ${d.from ?? '(not installed)'} -> ${d.to}`);
  return out;
}

export function planText(p: Plan): string {
  const lines = [`plan ${p.plan_id} of ${p.incarnation} (${p.operation}): ${p.status}${p.error ? `: ${p.error}` : ''}`];
  const quiet: string[] = [];
  for (const h of p.hosts) {
    const changing = h.steps.filter((s) => s.would_change || s.status === 'failed' || s.status === 'unknown');
    if (changing.length === 0 && h.status !== 'failed' && h.status !== 'unknown') {
      quiet.push(h.sid);
      continue;
    }
    lines.push(`${h.sid}: ${h.status}${h.reason ? ` (${h.reason})` : ''}`);
    for (const s of changing) lines.push(...stepLines(s));
  }
  if (quiet.length > 0)
    lines.push(
      `no change on ${quiet.length} host(s): ${quiet.slice(0, 10).join(', ')}${quiet.length > 10 ? ', ...' : ''}`,
    );
  lines.push(`${p.summary?.would_change ?? 0} step(s) would change; the plan can be applied until ${p.expires_at}`);
  return `${lines.join('\n')}\n`;
}
