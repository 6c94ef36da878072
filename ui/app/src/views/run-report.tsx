// A run report: the run's outcome, then per host and per step what happened (changed, ok, failed,
// unknown) with the step's output, and a link to the run's workflow in the Temporal Web UI.
import { api, enc } from '../api';
import { Busy, ErrorBox, StatusBadge } from '../components';
import { usePoll } from '../hooks';

export interface RunStep { index?: number; step_index?: number; name: string | null; module: string; status: string; changed: boolean; output: string }
export interface RunHost { sid: string; status: string; reason?: string | null; steps: RunStep[] }
export interface RunReport {
  apply_id: string; operation: string; status: string; phase?: string; error?: string | null;
  render_errors?: unknown; hosts: RunHost[]; temporal_ui?: string | null; created_at?: string; finished_at?: string | null;
}

/** What an operator reads first: a step that changed something is `changed`, not just `ok`. */
function stepOutcome(s: RunStep): string {
  return s.status === 'ok' && s.changed ? 'changed' : s.status;
}

export function RunReportView({ incarnation, applyId }: { incarnation: string; applyId: string }) {
  const report = usePoll(() => api<RunReport>('GET', `/v1/incarnations/${enc(incarnation)}/runs/${enc(applyId)}`), 3000, [incarnation, applyId]);
  const r = report.data;
  return (
    <section class="run-report" aria-label={`Run ${applyId}`}>
      <h3>Run <code>{applyId}</code></h3>
      <ErrorBox error={report.error} />
      {!r && !report.error && <Busy busy label="Loading the run report…" />}
      {r && (
        <>
          <p>
            {r.operation} · <StatusBadge status={r.status} />{r.phase ? ` · phase ${r.phase}` : ''}
            {r.temporal_ui && <> · <a href={r.temporal_ui} target="_blank" rel="noopener noreferrer">Open in Temporal Web UI</a></>}
          </p>
          {r.error && <div class="error" role="alert">{r.error}</div>}
          {r.render_errors != null && <pre class="error">{JSON.stringify(r.render_errors, null, 2)}</pre>}
          <table class="grid" data-testid="run-steps">
            <thead><tr><th>Host</th><th>#</th><th>Step</th><th>Module</th><th>Result</th><th>Output</th></tr></thead>
            <tbody>
              {r.hosts.length === 0 && <tr><td colSpan={6} class="muted">No host was targeted.</td></tr>}
              {r.hosts.map((h) => h.steps.length === 0
                ? <tr key={h.sid}><td>{h.sid}</td><td colSpan={3} class="muted">{h.reason ?? 'no steps'}</td><td><StatusBadge status={h.status} /></td><td /></tr>
                : h.steps.map((s, i) => (
                  <tr key={`${h.sid}-${i}`}>
                    <td>{i === 0 ? <>{h.sid} <StatusBadge status={h.status} /></> : ''}</td>
                    <td>{s.index ?? s.step_index ?? i}</td><td>{s.name ?? ''}</td><td><code>{s.module}</code></td>
                    <td><StatusBadge status={stepOutcome(s)} /></td>
                    <td>{s.output ? <details><summary>output</summary><pre>{s.output}</pre></details> : ''}</td>
                  </tr>
                )))}
            </tbody>
          </table>
        </>
      )}
    </section>
  );
}
