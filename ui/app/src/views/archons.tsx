// Operators (archons, issue 31): who may act on the cluster, with which role, and since when their
// tokens hold. Each action shows only to a viewer whose role grants it, read from the keeper's own
// answer for the signed-in operator (nothing is shown before it arrives: default deny). The keeper
// stays the authority: it checks every call, and its refusal (a 403, the 409 for the last
// cluster-admin) is shown as it answers.
import { useState } from 'preact/hooks';
import { permits, ROLE_NAMES } from '../../../../api/roles';
import { api, enc, listAll } from '../api';
import { Ago, Busy, ConfirmDialog, CopyButton, ErrorBox } from '../components';
import { useAction, usePoll } from '../hooks';
import { currentAid } from '../session';

export interface Archon {
  aid: string;
  role: string;
  permissions: string[];
  created_by: string | null;
  created_at: string;
  tokens_valid_after: string | null;
}

interface IssuedToken {
  aid: string;
  token: string;
  expires_at: string | null;
}

/** A button that asks first, then calls the keeper; the keeper's error stays beside it. */
function ConfirmedAction(props: {
  label: string;
  title: string;
  busyLabel: string;
  danger?: boolean;
  explain: string;
  call(): Promise<unknown>;
  onDone(): void;
}) {
  const [asking, setAsking] = useState(false);
  const action = useAction();
  const confirm = async () => {
    setAsking(false);
    const ok = await action.run(async () => {
      await props.call();
      return true;
    });
    if (ok) props.onDone();
  };
  return (
    <span>
      <button
        type="button"
        class={props.danger ? 'danger' : undefined}
        disabled={action.busy}
        onClick={() => setAsking(true)}
      >
        {props.label}
      </button>
      {asking && (
        <ConfirmDialog title={props.title} confirm={props.label} onConfirm={confirm} onCancel={() => setAsking(false)}>
          {props.explain}
        </ConfirmDialog>
      )}
      <Busy busy={action.busy} label={props.busyLabel} />
      <ErrorBox error={action.error} />
    </span>
  );
}

function RoleForm({ a, onDone }: { a: Archon; onDone(): void }) {
  const [role, setRole] = useState(a.role);
  const action = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    const ok = await action.run(() => api<Archon>('PATCH', `/v1/archons/${enc(a.aid)}`, { role }));
    if (ok) onDone();
  };
  return (
    <form class="row-form" onSubmit={submit} aria-label={`Role of ${a.aid}`}>
      <select aria-label="Role" value={role} onChange={(e) => setRole((e.target as HTMLSelectElement).value)}>
        {ROLE_NAMES.map((r) => (
          <option key={r} value={r}>
            {r}
          </option>
        ))}
      </select>{' '}
      <button type="submit" disabled={action.busy || role === a.role}>
        Change role
      </button>
      <Busy busy={action.busy} label="Saving…" />
      <ErrorBox error={action.error} />
    </form>
  );
}

/** A new token for an operator, shown once (the keeper keeps no copy). */
function IssueToken({ aid }: { aid: string }) {
  const [issued, setIssued] = useState<IssuedToken>();
  const action = useAction();
  const issue = async () => {
    const t = await action.run(() => api<IssuedToken>('POST', `/v1/archons/${enc(aid)}/tokens`));
    if (t) setIssued(t);
  };
  return (
    <span>
      <button type="button" disabled={action.busy} onClick={issue}>
        Issue token
      </button>
      <Busy busy={action.busy} label="Issuing…" />
      <ErrorBox error={action.error} />
      {issued && (
        <div class="notice" data-testid={`token-${aid}`}>
          Token for {issued.aid}, shown once (expires {issued.expires_at ?? 'never'}):{' '}
          <code class="token">{issued.token}</code> <CopyButton text={issued.token} />
        </div>
      )}
    </span>
  );
}

function AddOperator({ onDone }: { onDone(): void }) {
  const [aid, setAid] = useState('');
  const [role, setRole] = useState('viewer');
  const action = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    const ok = await action.run(() => api<Archon>('POST', '/v1/archons', { aid: aid.trim(), role }));
    if (ok) {
      setAid('');
      onDone();
    }
  };
  return (
    <form class="inline-form" onSubmit={submit} aria-label="Add an operator" noValidate>
      <h3>Add an operator</h3>
      <label>
        AID{' '}
        <input
          name="aid"
          value={aid}
          placeholder="alice"
          onInput={(e) => setAid((e.target as HTMLInputElement).value)}
        />
      </label>
      <label>
        Role{' '}
        <select name="role" value={role} onChange={(e) => setRole((e.target as HTMLSelectElement).value)}>
          {ROLE_NAMES.map((r) => (
            <option key={r} value={r}>
              {r}
            </option>
          ))}
        </select>
      </label>
      <button type="submit" disabled={action.busy}>
        Add
      </button>
      <Busy busy={action.busy} label="Adding…" />
      <ErrorBox error={action.error} />
    </form>
  );
}

function TokensCell({ a }: { a: Archon }) {
  if (!a.tokens_valid_after) return <span class="muted">none revoked</span>;
  return (
    <span title="tokens issued before this moment are refused">
      all revoked <Ago at={a.tokens_valid_after} />
    </span>
  );
}

export function Archons() {
  const archons = usePoll(() => listAll<Archon>('/v1/archons'), 10_000);
  const me = currentAid();
  // The signed-in operator's permissions as the registry has them now (its role may have changed
  // since its token was issued); an empty list until the list arrived.
  const mine = archons.data?.find((a) => a.aid === me)?.permissions ?? [];
  const may = (p: string) => permits(mine, p);
  const actions =
    may('archons:update') || may('archons:revoke-tokens') || may('archons:delete') || may('archons:issue-token');
  return (
    <section>
      <h2>Operators</h2>
      {may('archons:create') && <AddOperator onDone={archons.refresh} />}
      <ErrorBox error={archons.error} />
      {!archons.data && !archons.error && <Busy busy label="Loading…" />}
      {archons.data && (
        <table class="grid" data-testid="archons-table">
          <thead>
            <tr>
              <th>AID</th>
              <th>Role</th>
              <th>Tokens</th>
              <th>Created by</th>
              <th>Created</th>
              {actions && <th>Actions</th>}
            </tr>
          </thead>
          <tbody>
            {archons.data.map((a) => (
              <tr key={a.aid} data-archon={a.aid} data-role={a.role}>
                <td>
                  {a.aid}
                  {a.aid === me && <span class="muted"> (you)</span>}
                </td>
                <td>{may('archons:update') ? <RoleForm key={a.role} a={a} onDone={archons.refresh} /> : a.role}</td>
                <td>
                  <TokensCell a={a} />
                </td>
                <td>{a.created_by ?? '—'}</td>
                <td>
                  <Ago at={a.created_at} />
                </td>
                {actions && (
                  <td>
                    {may('archons:issue-token') && <IssueToken aid={a.aid} />}{' '}
                    {may('archons:revoke-tokens') && (
                      <ConfirmedAction
                        label="Revoke tokens"
                        title={`Revoke the tokens of ${a.aid}`}
                        busyLabel="Revoking…"
                        explain={`Every token of ${a.aid} issued before now is refused from its next request, at every keeper. The operator stays; issue it a fresh token.${a.aid === me ? ' This ends your own session too.' : ''}`}
                        call={() => api('POST', `/v1/archons/${enc(a.aid)}/revoke-tokens`)}
                        onDone={archons.refresh}
                      />
                    )}{' '}
                    {may('archons:delete') && (
                      <ConfirmedAction
                        label="Delete"
                        danger
                        title={`Delete operator ${a.aid}`}
                        busyLabel="Deleting…"
                        explain={`${a.aid} is removed and its tokens are refused from its next request. What it did stays attributed to it. The keeper refuses to remove the last cluster-admin.`}
                        call={() => api('DELETE', `/v1/archons/${enc(a.aid)}`)}
                        onDone={archons.refresh}
                      />
                    )}
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
