// A run waiting at a gate between `serial:` batches (docs/runs.md "Gates between batches"): what it
// waits for, after which batch, since when, and for an approval an Approve button. A refusal (403
// without `runs:approve`, 409 when the run no longer waits) shows the keeper's own detail, so the
// operator reads why; the report follows the run's event stream, which says when the wait ends.
import { useState } from 'preact/hooks';
import { api, enc } from '../api';
import { Busy, ErrorBox } from '../components';

export interface RunWaiting {
  for: 'health' | 'approval';
  batch: number;
  health?: string;
  since: string;
}

export function RunWaitingBox(props: { incarnation: string; applyId: string; waiting: RunWaiting }) {
  const { waiting: w } = props;
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const [approved, setApproved] = useState<number>();
  const since = new Date(w.since).toLocaleString();
  const approve = async () => {
    setBusy(true);
    setError(undefined);
    try {
      const r = await api<{ batch: number }>(
        'POST',
        `/v1/incarnations/${enc(props.incarnation)}/runs/${enc(props.applyId)}/approve`,
      );
      setApproved(r.batch);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="notice" role="status" data-testid="run-waiting" data-waiting-for={w.for}>
      {w.for === 'approval' ? (
        <>
          Waiting for approval of batch {w.batch} since <time dateTime={w.since}>{since}</time>.{' '}
          {approved === w.batch ? (
            <span class="muted">Approved: the next batch starts.</span>
          ) : (
            <button type="button" onClick={approve} disabled={busy}>
              Approve
            </button>
          )}{' '}
          <Busy busy={busy} label="Approving…" />
        </>
      ) : (
        <>
          Waiting for the health check <code>{w.health}</code> after batch {w.batch} since{' '}
          <time dateTime={w.since}>{since}</time>.
        </>
      )}
      <ErrorBox error={error} />
    </div>
  );
}
