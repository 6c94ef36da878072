// History: one state snapshot per committed change. Pick two to see a key-level diff; each snapshot
// links to the run that produced it.
import { useState } from 'preact/hooks';
import { api, enc } from '../api';
import { Busy, ErrorBox } from '../components';
import { diffStates } from '../diff';
import { usePoll } from '../hooks';

export interface Snapshot {
  id: string | number;
  apply_id: string;
  operation: string;
  state: Record<string, unknown>;
  created_at: string;
}

function Value({ v }: { v: unknown }) {
  return v === undefined ? <span class="muted">—</span> : <code>{JSON.stringify(v)}</code>;
}

export function History({ incarnation, onShowRun }: { incarnation: string; onShowRun(applyId: string): void }) {
  const history = usePoll(
    async () => {
      const body = await api<{ items: Snapshot[] } | Snapshot[]>('GET', `/v1/incarnations/${enc(incarnation)}/history`);
      return Array.isArray(body) ? body : body.items;
    },
    5000,
    [incarnation],
  );
  const snaps = history.data ?? [];
  const [fromId, setFrom] = useState<string>();
  const [toId, setTo] = useState<string>();
  // Default: the last change (the two newest snapshots, or empty -> the only one).
  const sorted = [...snaps].sort(
    (a, b) => a.created_at.localeCompare(b.created_at) || String(a.id).localeCompare(String(b.id)),
  );
  const to = sorted.find((s) => String(s.id) === toId) ?? sorted[sorted.length - 1];
  const from = fromId === '' ? undefined : (sorted.find((s) => String(s.id) === fromId) ?? sorted[sorted.length - 2]);
  const changes = to ? diffStates(from?.state ?? {}, to.state) : [];
  const pick = (label: string, value: string | undefined, set: (v: string) => void) => (
    <label>
      {label}
      <select name={label.toLowerCase()} value={value} onChange={(e) => set((e.target as HTMLSelectElement).value)}>
        {label === 'From' && <option value="">(empty state)</option>}
        {sorted.map((s, i) => (
          <option key={String(s.id)} value={String(s.id)}>
            #{i + 1} {s.operation} · {new Date(s.created_at).toLocaleString()}
          </option>
        ))}
      </select>
    </label>
  );
  return (
    <section aria-label="History">
      <h3>History</h3>
      <ErrorBox error={history.error} />
      {!history.data && !history.error && <Busy busy label="Loading history…" />}
      {history.data && sorted.length === 0 && (
        <p class="muted">No snapshot yet: the first one is taken when a run commits.</p>
      )}
      {sorted.length > 0 && (
        <>
          <table class="grid" data-testid="history-table">
            <thead>
              <tr>
                <th>#</th>
                <th>Operation</th>
                <th>Committed</th>
                <th>Run</th>
              </tr>
            </thead>
            <tbody>
              {sorted.map((s, i) => (
                <tr key={String(s.id)}>
                  <td>{i + 1}</td>
                  <td>{s.operation}</td>
                  <td>{new Date(s.created_at).toLocaleString()}</td>
                  <td>
                    <button type="button" class="link" onClick={() => onShowRun(s.apply_id)}>
                      {s.apply_id}
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <div class="diff-pickers">
            {pick('From', fromId ?? (from ? String(from.id) : ''), setFrom)}
            {pick('To', toId ?? (to ? String(to.id) : undefined), setTo)}
          </div>
          <table class="grid diff" data-testid="state-diff">
            <thead>
              <tr>
                <th>Key</th>
                <th>Change</th>
                <th>Before</th>
                <th>After</th>
              </tr>
            </thead>
            <tbody>
              {changes.length === 0 && (
                <tr>
                  <td colSpan={4} class="muted">
                    No difference.
                  </td>
                </tr>
              )}
              {changes.map((c) => (
                <tr key={c.path} class={`diff-${c.kind}`}>
                  <td>
                    <code>{c.path}</code>
                  </td>
                  <td>{c.kind}</td>
                  <td>
                    <Value v={c.before} />
                  </td>
                  <td>
                    <Value v={c.after} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </section>
  );
}
