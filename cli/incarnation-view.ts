// How keeperctl shows an incarnation on the terminal: the columns of `incarnations list` and the
// fields of `incarnations get`, including the version it runs (and a newer published one) and its
// drift checks with the count of checks in sync (docs/versions.md, docs/drift.md). JSON and YAML
// print the API's body unchanged.
import { details, table } from './output';

export interface Drift {
  interval: string | null;
  auto_repair: boolean;
  status: string;
  checked_at: string | null;
  plan_id: string | null;
  drifted_sids: string[];
  checks_in_sync?: number;
  last_in_sync_at?: string | null;
}

/** "every 10m, auto repair: drifted (web-1) at <time>", or "off". */
export function driftText(d: Drift | undefined): string {
  if (!d || d.interval === null) return 'off';
  const outcome = d.status === 'drifted' ? `drifted (${d.drifted_sids.join(', ')})` : d.status;
  return `every ${d.interval}${d.auto_repair ? ', auto repair' : ''}: ${outcome}${d.checked_at ? ` at ${d.checked_at}` : ''}`;
}

/** "12 checks, the last at <time>": checks in sync keep no plan, so this count is their record. */
export function inSyncText(d: Drift | undefined): string | null {
  if (!d || d.checks_in_sync === undefined) return null;
  const n = d.checks_in_sync;
  if (n === 0) return 'none yet';
  return `${n} check${n === 1 ? '' : 's'}${d.last_in_sync_at ? `, the last at ${d.last_in_sync_at}` : ''}`;
}

/** The list's short form: the outcome only, with the number of drifted hosts. */
function driftCell(d: Drift | undefined): string {
  if (!d || d.interval === null) return 'off';
  return d.status === 'drifted' ? `drifted ${d.drifted_sids.length}` : d.status;
}

const columns = [
  { header: 'NAME', value: (i: any) => i.name },
  { header: 'SERVICE', value: (i: any) => i.service },
  { header: 'VERSION', value: (i: any) => i.version },
  { header: 'NEWER', value: (i: any) => i.newer_version },
  { header: 'STATUS', value: (i: any) => i.status },
  { header: 'COVENS', value: (i: any) => i.covens },
  { header: 'DRIFT', value: (i: any) => driftCell(i.drift) },
  { header: 'LAST RUN', value: (i: any) => (i.last_run ? `${i.last_run.operation} ${i.last_run.status}` : null) },
];

export function incarnationTable(items: readonly any[]): string {
  return table(items, columns);
}

function hostInputText(h: any): string | null {
  if (!h) return null;
  const part = (kind: string, m: Record<string, Record<string, unknown>> | undefined) =>
    Object.entries(m ?? {}).map(([k, v]) => `${kind} ${k}: ${Object.keys(v).join(', ')}`);
  const parts = [...part('coven', h.covens), ...part('host', h.hosts)];
  return parts.length > 0 ? parts.join('; ') : null;
}

export function incarnationDetails(i: any): string {
  return details(
    {
      ...i,
      newer_version: i.newer_version
        ? `${i.newer_version} (keeperctl incarnations upgrade ${i.name} --version ${i.newer_version})`
        : null,
      version_yanked: i.version_yanked
        ? `${i.version_yanked.reason} (by ${i.version_yanked.yanked_by ?? 'unknown'} at ${i.version_yanked.yanked_at}; it keeps running: upgrade to another version)`
        : null,
      last_run: i.last_run ? `${i.last_run.operation} ${i.last_run.status} (${i.last_run.apply_id})` : null,
      drift: driftText(i.drift),
      // Per-host input: which hosts and covens have an entry and the keys it sets (values stay in -o yaml).
      host_input: hostInputText(i.host_input),
      drift_plan: i.drift?.plan_id ?? null,
      drift_in_sync: inSyncText(i.drift),
      // Hosts a run within its failure budget left behind (docs/runs.md); the converger brings them in.
      pending_hosts:
        Array.isArray(i.pending_hosts) && i.pending_hosts.length > 0
          ? i.pending_hosts
              .map((p: any) => `${p.sid} ${p.status} in ${p.apply_id}${p.reason ? `: ${p.reason}` : ''}`)
              .join('; ')
          : null,
    },
    [
      'name',
      'service',
      'version',
      'version_yanked',
      'newer_version',
      'status',
      'covens',
      'state_schema_version',
      'service_commit',
      'last_run',
      'drift',
      'drift_plan',
      'drift_in_sync',
      'pending_hosts',
      'host_input',
      'state',
      'updated_at',
    ],
  );
}
