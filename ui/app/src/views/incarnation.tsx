// One incarnation: status (followed live while a run is applying), drift, its current state, the
// actions (run an operation; make a plan; on error_locked: unlock, or unlock and retry the failed
// operation), recent plans, history with a diff between two snapshots, and a run report.
import { useState } from 'preact/hooks';
import { api, enc } from '../api';
import { Ago, Busy, ErrorBox, Link, StatusBadge } from '../components';
import { useAction, usePoll } from '../hooks';
import { DriftPanel, type Drift } from './drift';
import { History } from './history';
import { PlanForm } from './plan-form';
import { PendingHosts, type PendingHost } from './pending-hosts';
import { PlanList } from './plan-list';
import { RunOperation } from './run-form';
import { RunList } from './run-list';
import { RunReportView } from './run-report';
import { Granted } from '../permissions';

export interface IncarnationRecord {
  name: string;
  service: string;
  covens: string[];
  status: string;
  state: Record<string, unknown>;
  /** The published service version it runs with, and the service's newest when that is another one. */
  version: string | null;
  newer_version: string | null;
  state_schema_version: number | null;
  /** The incarnation's latest run (running, or the last one that ended). */
  apply_id: string | null;
  last_run: { apply_id: string; status: string; operation: string; error: string | null } | null;
  updated_at?: string;
  /** Absent on a keeper without drift checks: read as "unchecked". */
  drift?: Drift | null;
  /** Hosts a run within its failure budget left behind (docs/runs.md "Failure budget"). */
  pending_hosts?: PendingHost[];
  /** Per-host input by sid and by coven (docs/incarnations.md "Per-host input"); null or absent: none. */
  host_input?: {
    hosts?: Record<string, Record<string, unknown>>;
    covens?: Record<string, Record<string, unknown>>;
  } | null;
}

/** Per-host input, read-only: each coven's and host's entry (set with keeperctl incarnations host-input). Secret inputs are references. */
function HostInputPanel({ hostInput }: { hostInput: IncarnationRecord['host_input'] }) {
  const rows = [
    ...Object.entries(hostInput?.covens ?? {}).map(([k, v]) => ({ kind: 'coven', key: k, value: v })),
    ...Object.entries(hostInput?.hosts ?? {}).map(([k, v]) => ({ kind: 'host', key: k, value: v })),
  ];
  if (rows.length === 0) return null;
  return (
    <>
      <h3>Per-host input</h3>
      <p>Merged over the input for these hosts: covens in the incarnation's order, then the host's own.</p>
      <table data-testid="host-input">
        <thead>
          <tr>
            <th>For</th>
            <th>Input</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={`${r.kind} ${r.key}`}>
              <td>
                {r.kind} <code>{r.key}</code>
              </td>
              <td>
                <code>{JSON.stringify(r.value)}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

/** "version v1" and, when the service published a newer one, the button that upgrades to it (docs/versions.md). */
function Version({ inc, onAccepted }: { inc: IncarnationRecord; onAccepted(applyId: string): void }) {
  const action = useAction();
  const upgrade = async () => {
    const r = await action.run(() =>
      api<{ apply_id: string }>('POST', `/v1/incarnations/${enc(inc.name)}/upgrade`, { version: inc.newer_version }),
    );
    if (r) onAccepted(r.apply_id);
  };
  return (
    <div data-testid="version" class="version">
      Version <strong>{inc.version ?? '—'}</strong> (state schema {inc.state_schema_version ?? '—'})
      {inc.newer_version && (
        <>
          {' '}
          <span class="tag">{inc.newer_version} is published</span>
          <Granted permission="incarnations:upgrade" what="upgrade incarnations" quiet>
            <button type="button" disabled={inc.status !== 'ready' || action.busy} onClick={() => void upgrade()}>
              Upgrade to {inc.newer_version}
            </button>
          </Granted>
        </>
      )}
      <Busy busy={action.busy} label="Starting the upgrade…" />
      <ErrorBox error={action.error} />
    </div>
  );
}

export function Incarnation({ name }: { name: string }) {
  const inc = usePoll(() => api<IncarnationRecord>('GET', `/v1/incarnations/${enc(name)}`), 2000, [name]);
  const unlock = useAction();
  const [shownRun, setShownRun] = useState<string>();
  const i = inc.data;
  const runId = shownRun ?? i?.apply_id ?? undefined;

  const doUnlock = async (retry: boolean) => {
    const r = await unlock.run(() =>
      api<{ apply_id?: string }>('POST', `/v1/incarnations/${enc(name)}/unlock`, retry ? { retry: true } : undefined),
    );
    if (r) {
      // With retry the answer is the new run (202); without, the unlocked incarnation.
      if (retry && r.apply_id) setShownRun(r.apply_id);
      inc.refresh();
    }
  };

  return (
    <section>
      <p>
        <Link href="/ui/incarnations">← Incarnations</Link>
      </p>
      <h2>
        {name} {i && <StatusBadge status={i.status} />}
      </h2>
      <ErrorBox error={inc.error} />
      {!i && !inc.error && <Busy busy label="Loading…" />}
      {i && (
        <>
          <p>
            Service <strong>{i.service}</strong> · covens{' '}
            {i.covens.map((c) => (
              <span class="tag" key={c}>
                {c}
              </span>
            ))}{' '}
            · updated <Ago at={i.updated_at} />
          </p>
          <Version
            inc={i}
            onAccepted={(id) => {
              setShownRun(id);
              inc.refresh();
            }}
          />
          <DriftPanel incarnation={name} drift={i.drift} />
          <PendingHosts incarnation={name} hosts={i.pending_hosts ?? []} />
          {i.status === 'applying' && <Busy busy label={`Applying (run ${i.apply_id ?? ''})…`} />}
          {i.status === 'error_locked' && (
            <div class="locked" role="alert">
              <p>
                Locked: run {i.last_run?.apply_id} ({i.last_run?.operation}) failed and nothing was committed
                {i.last_run?.error ? `: ${i.last_run.error}` : ''}. Fix the cause, then unlock.
              </p>
              <Granted permission="incarnations:unlock" what="unlock incarnations">
                <button type="button" disabled={unlock.busy} onClick={() => void doUnlock(false)}>
                  Unlock
                </button>
                <button type="button" disabled={unlock.busy} onClick={() => void doUnlock(true)}>
                  Unlock and retry
                </button>
              </Granted>
            </div>
          )}
          <Busy busy={unlock.busy} label="Unlocking…" />
          <ErrorBox error={unlock.error} />
          <HostInputPanel hostInput={i.host_input} />
          <h3>Current state</h3>
          <pre data-testid="current-state">{JSON.stringify(i.state, null, 2)}</pre>
          <Granted permission="incarnations:run" what="run operations">
            <RunOperation
              name={name}
              service={i.service}
              version={i.version}
              lastRunId={i.last_run?.apply_id}
              disabled={i.status !== 'ready'}
              onAccepted={(id) => {
                setShownRun(id);
                inc.refresh();
              }}
            />
          </Granted>
          <Granted permission="incarnations:plan" what="make plans">
            <PlanForm
              name={name}
              service={i.service}
              version={i.version}
              lastOperation={i.last_run?.operation}
              lastRunId={i.last_run?.apply_id}
            />
          </Granted>
          {runId && <RunReportView incarnation={name} applyId={runId} />}
          <RunList incarnation={name} />
          <PlanList incarnation={name} />
          <History incarnation={name} onShowRun={setShownRun} />
        </>
      )}
    </section>
  );
}
