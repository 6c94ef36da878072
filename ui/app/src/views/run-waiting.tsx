// A run waiting at a gate between `serial:` batches (docs/runs.md "Gates between batches"): what it
// waits for, after which batch, since when, and for an approval an Approve button. Beside it, for
// either wait, Cancel run, confirmed in place because it cannot be undone: no further batch starts
// and the incarnation ends error_locked (docs/runs.md "Cancelling a waiting run"). A refusal (403
// without `runs:approve`, 409 when the run no longer waits) shows the keeper's own detail, so the
// operator reads why; the report follows the run's event stream, which says when the wait ends.
import { useState } from 'preact/hooks';
import { api, enc } from '../api';
import { Busy, ConfirmDialog, ErrorBox } from '../components';
import { Granted } from '../permissions';

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
  const [confirming, setConfirming] = useState(false);
  const [cancelled, setCancelled] = useState(false);
  const since = new Date(w.since).toLocaleString();
  const post = async (action: 'approve' | 'cancel', done: (r: { batch: number }) => void) => {
    setBusy(true);
    setError(undefined);
    try {
      done(
        await api<{ batch: number }>(
          'POST',
          `/v1/incarnations/${enc(props.incarnation)}/runs/${enc(props.applyId)}/${action}`,
        ),
      );
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const approve = () => post('approve', (r) => setApproved(r.batch));
  const cancel = () =>
    post('cancel', () => {
      setConfirming(false);
      setCancelled(true);
    });
  const decided = cancelled || approved === w.batch;
  return (
    <div class="notice" role="status" data-testid="run-waiting" data-waiting-for={w.for}>
      {w.for === 'approval' ? (
        <>
          Waiting for approval of batch {w.batch} since <time dateTime={w.since}>{since}</time>.{' '}
          {approved === w.batch ? (
            <span class="muted">Approved: the next batch starts.</span>
          ) : (
            !decided && (
              <Granted permission="runs:approve" what="approve batches" quiet>
                <button type="button" onClick={approve} disabled={busy}>
                  Approve
                </button>
              </Granted>
            )
          )}{' '}
        </>
      ) : (
        <>
          Waiting for the health check <code>{w.health}</code> after batch {w.batch} since{' '}
          <time dateTime={w.since}>{since}</time>.{' '}
        </>
      )}
      {cancelled ? (
        <span class="muted">Cancelled: no further batch starts and nothing is committed.</span>
      ) : (
        !decided && (
          <Granted permission="runs:approve" what="cancel runs" quiet>
            <button type="button" class="danger" onClick={() => setConfirming(true)} disabled={busy}>
              Cancel run
            </button>
          </Granted>
        )
      )}{' '}
      {confirming && (
        <ConfirmDialog
          title={`Cancel run ${props.applyId}`}
          confirm="Cancel the run"
          dismiss="Keep waiting"
          onConfirm={cancel}
          onCancel={() => setConfirming(false)}
        >
          No further batch starts and nothing is committed: the hosts of batch {w.batch} and before keep what they were
          given, the others are skipped, and {props.incarnation} ends error_locked until it is unlocked.
        </ConfirmDialog>
      )}
      <Busy busy={busy} label="Sending…" />
      <ErrorBox error={error} />
    </div>
  );
}
