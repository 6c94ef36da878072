// Taking things back on the Services page (issue 31): delete a service (the keeper refuses it, naming
// the incarnations, while one uses it) and yank a published version with a reason. The keeper's own
// answer is shown, so a 409 reads exactly as the API says it.
import { useState } from 'preact/hooks';
import { api, enc, type Page } from '../api';
import { Ago, Busy, ConfirmDialog, ErrorBox } from '../components';
import { useAction, usePoll } from '../hooks';
import { Granted } from '../permissions';

export interface ServiceVersion {
  service: string;
  version: string;
  commit: string;
  published_by: string | null;
  published_at: string;
  yanked: { reason: string; yanked_by: string | null; yanked_at: string } | null;
}

export function DeleteService({ name, onDone }: { name: string; onDone(): void }) {
  const [asking, setAsking] = useState(false);
  const action = useAction();
  const confirm = async () => {
    setAsking(false);
    const ok = await action.run(async () => {
      await api<void>('DELETE', `/v1/services/${enc(name)}`);
      return true;
    });
    if (ok) onDone();
  };
  return (
    <span>
      <button type="button" class="danger" disabled={action.busy} onClick={() => setAsking(true)}>
        Delete
      </button>
      {asking && (
        <ConfirmDialog
          title={`Delete service ${name}`}
          confirm="Delete"
          onConfirm={confirm}
          onCancel={() => setAsking(false)}
        >
          The service and its published versions leave the catalog. The keeper refuses while an incarnation uses it.
        </ConfirmDialog>
      )}
      <Busy busy={action.busy} label="Deleting…" />
      <ErrorBox error={action.error} />
    </span>
  );
}

function YankForm({ v, onDone }: { v: ServiceVersion; onDone(): void }) {
  const [reason, setReason] = useState('');
  const action = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    const ok = await action.run(() =>
      api<ServiceVersion>('POST', `/v1/services/${enc(v.service)}/versions/${enc(v.version)}/yank`, {
        reason: reason.trim(),
      }),
    );
    if (ok) onDone();
  };
  return (
    <form class="inline-form" onSubmit={submit} aria-label={`Yank ${v.version}`}>
      <label>
        Reason{' '}
        <input name="reason" required value={reason} onInput={(e) => setReason((e.target as HTMLInputElement).value)} />
      </label>
      <button type="submit" disabled={action.busy}>
        Yank
      </button>
      <Busy busy={action.busy} label="Yanking…" />
      <ErrorBox error={action.error} />
    </form>
  );
}

/** The published versions of one service, each with its yank state or the form to yank it. */
export function ServiceVersions({ name }: { name: string }) {
  const versions = usePoll(
    // One page: the route lists every version and takes no paging arguments.
    async () => (await api<Page<ServiceVersion>>('GET', `/v1/services/${enc(name)}/versions`)).items,
    10_000,
    [name],
  );
  return (
    <div data-testid={`versions-${name}`}>
      <ErrorBox error={versions.error} />
      {versions.data && (
        <table class="grid">
          <thead>
            <tr>
              <th>Version</th>
              <th>Commit</th>
              <th>Published</th>
              <th>Yanked</th>
            </tr>
          </thead>
          <tbody>
            {versions.data.map((v) => (
              <tr key={v.version} data-version={v.version} data-yanked={v.yanked ? 'yes' : 'no'}>
                <td>{v.version}</td>
                <td>
                  <code>{v.commit.slice(0, 12)}</code>
                </td>
                <td>
                  {v.published_by ?? '—'}, <Ago at={v.published_at} />
                </td>
                <td>
                  {v.yanked ? (
                    <span class="muted">
                      yanked by {v.yanked.yanked_by ?? '—'}: {v.yanked.reason}
                    </span>
                  ) : (
                    <Granted permission="services:yank" what="yank versions" quiet>
                      <YankForm v={v} onDone={versions.refresh} />
                    </Granted>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
