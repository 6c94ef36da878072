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
  /** The plan of an upgrade (docs/plans.md): the migrations, the state before and after, what it previews. */
  upgrade?: {
    version: string;
    from_version: number | null;
    to_version: number;
    migrations?: number[];
    state_before?: Record<string, unknown>;
    state_after?: Record<string, unknown>;
    operation?: string;
  } | null;
  render_errors?: Array<{
    file: string;
    line: number;
    col: number;
    rule: string;
    message: string;
    fix?: string;
  }> | null;
}

const show = (v: unknown) => (v === undefined ? '(none)' : JSON.stringify(v));

/** Top-level state keys whose value differs between before and after, one line each. */
function stateLines(before: Record<string, unknown> = {}, after: Record<string, unknown> = {}): string[] {
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  const changed = keys.filter((k) => JSON.stringify(before[k]) !== JSON.stringify(after[k]));
  if (changed.length === 0) return ['  state: unchanged by the migrations'];
  return changed.map((k) => `  state ${k}: ${show(before[k])} -> ${show(after[k])}`);
}

/** What an upgrade plan shows first: the version, the migrations and what they do to the state. */
function upgradeLines(p: Plan): string[] {
  const u = p.upgrade!;
  const migrations = u.migrations ?? [];
  return [
    `upgrade to ${u.version}: state_schema_version ${u.from_version ?? '(none)'} -> ${u.to_version}, ` +
      `${migrations.length > 0 ? `migrations ${migrations.join(', ')}` : 'no migration'}; ` +
      `the hosts show what ${u.operation ?? 'the last operation'} at ${u.version} would change`,
    ...(u.state_before || u.state_after ? stateLines(u.state_before, u.state_after) : []),
  ];
}

/** What to run after a ready plan: apply it, or (an upgrade plan) upgrade then run the operation. */
export function nextSteps(p: Plan): string {
  if (p.status !== 'ready') return '';
  if (p.upgrade)
    return (
      `this plan is a preview and is not applied: upgrade the state with: keeperctl incarnations upgrade ${p.incarnation} --version ${p.upgrade.version}\n` +
      `then apply the files of ${p.upgrade.version} with: keeperctl run ${p.incarnation} ${p.upgrade.operation ?? '<operation>'}\n`
    );
  return `apply exactly this plan with: keeperctl incarnations apply-plan ${p.incarnation} ${p.plan_id}\n`;
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
  if (p.upgrade) lines.push(...upgradeLines(p));
  // A plan that failed to render has no hosts: its render errors are the whole answer.
  for (const e of p.render_errors ?? [])
    lines.push(`  ${e.file}:${e.line}:${e.col} ${e.rule}: ${e.message}${e.fix ? ` (fix: ${e.fix})` : ''}`);
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
  const n = p.summary?.would_change ?? 0;
  // An upgrade's plan is never applied as such (docs/plans.md "The plan of an upgrade"): no apply-by date to offer.
  lines.push(
    p.upgrade
      ? `${n} step(s) would change at ${p.upgrade.version}, after the upgrade`
      : `${n} step(s) would change; the plan can be applied until ${p.expires_at}`,
  );
  return `${lines.join('\n')}\n`;
}
