// Souls: the registry as a live table (polled every 2 s: the registry itself is a snapshot that
// lags the live stream by a few seconds, so polling adds little), registration with the bootstrap
// token shown once, and token reissue with a confirmation before `force` on a 409.
import { useState } from 'preact/hooks';
import { api, enc, Problem } from '../api';
import { Ago, Busy, ConfirmDialog, CopyButton, ErrorBox, PagerBar, StatusBadge, splitList } from '../components';
import { useAction, usePager, usePoll } from '../hooks';
import { Granted } from '../permissions';

export interface Soul {
  sid: string;
  transport: string;
  covens: string[];
  status: string;
  last_seen_at: string | null;
  connected_kid: string | null;
  soulprint?: Record<string, unknown> | null;
  bootstrap_token_expires_at: string | null;
  cert_not_after?: string | null;
  /** Transport ssh: the connection settings (never key material), last contact and last error. */
  ssh?: {
    address: string;
    port: number;
    user: string;
    host_key: string | null;
    credential_ref: string;
    sudo: boolean;
    trust_on_first_use: boolean;
  } | null;
  last_contact_at?: string | null;
  last_error?: string | null;
}

/** An SSH host has no certificate: its column says how it is reached and why the last attempt failed. */
function SshReach({ soul }: { soul: Soul }) {
  const ssh = soul.ssh!;
  return (
    <span data-testid="ssh">
      ssh {ssh.user}@{ssh.address}:{ssh.port}
      {ssh.sudo ? ' (sudo)' : ''}
      {ssh.trust_on_first_use && (
        <span class="warn" title="the first host key seen was recorded instead of a pinned one">
          {' '}
          · trust on first use
        </span>
      )}
      {soul.last_error && (
        <div class="warn" data-testid="ssh-error">
          {soul.last_error}
        </div>
      )}
    </span>
  );
}

/** The certificate's expiry: a connected soul renews it at two thirds of its lifetime (docs/certificates.md). */
function CertExpiry({ at, now }: { at: string | null | undefined; now: Date }) {
  if (!at) return <span class="muted">none</span>;
  const s = Math.round((new Date(at).getTime() - now.getTime()) / 1000);
  const text =
    s <= 0
      ? 'expired'
      : s < 3600
        ? `in ${Math.max(1, Math.floor(s / 60))}m`
        : s < 86400
          ? `in ${Math.floor(s / 3600)}h`
          : `in ${Math.floor(s / 86400)}d`;
  return (
    <time dateTime={at} title={at} class={s <= 0 ? 'warn' : undefined}>
      {text}
    </time>
  );
}
interface IssuedToken {
  sid: string;
  bootstrap_token: string;
  bootstrap_token_expires_at: string;
}

const POLL_MS = 2000;
/** Rows per page: the server filters and pages, so a fleet of any size loads one page at a time. */
const PAGE_SIZE = 100;
const STATUSES = ['pending', 'connected', 'disconnected', 'revoked'] as const;

interface SoulPage {
  items: Soul[];
  next_cursor: string | null;
  counts?: Record<string, number>;
}

/** Souls per status for the current coven and SID filters; each count selects its status. */
function Counts({
  counts,
  status,
  onStatus,
}: {
  counts: Record<string, number> | undefined;
  status: string;
  onStatus(s: string): void;
}) {
  if (!counts) return null;
  const all = Object.values(counts).reduce((a, b) => a + b, 0);
  const tab = (key: string, label: string, n: number) => (
    <button
      type="button"
      class={status === key ? 'tab active' : 'tab'}
      aria-pressed={status === key}
      data-testid={`count-${key || 'all'}`}
      onClick={() => onStatus(key)}
    >
      {label} <strong>{n}</strong>
    </button>
  );
  return (
    <div class="counts" role="group" aria-label="Souls by status">
      {tab('', 'All', all)}
      {STATUSES.map((s) => tab(s, s, counts[s] ?? 0))}
    </div>
  );
}

function Soulprint({ print }: { print: Record<string, unknown> | null | undefined }) {
  if (!print) return <span class="muted">not reported</span>;
  const summary = [print.os_name, print.os_release, print.architecture]
    .filter((v) => typeof v === 'string')
    .join(' · ');
  return (
    <details class="soulprint">
      <summary>{summary || 'facts'}</summary>
      <pre>{JSON.stringify(print, null, 2)}</pre>
    </details>
  );
}

/** The token, once: nothing else in the UI can show it again (only its hash is stored). */
function TokenPanel({ issued, onDone }: { issued: IssuedToken; onDone(): void }) {
  return (
    <section class="token-panel" aria-label="Bootstrap token">
      <h3>Bootstrap token for {issued.sid}</h3>
      <p>
        Shown once: copy it now. It expires {new Date(issued.bootstrap_token_expires_at).toLocaleString()} and works
        once.
      </p>
      <div class="token-row">
        <code data-testid="bootstrap-token">{issued.bootstrap_token}</code>
        <CopyButton text={issued.bootstrap_token} />
      </div>
      <p class="muted">
        On the host: <code>soul init --config=/etc/keeper/soul.yml</code> with the token in{' '}
        <code>SOUL_BOOTSTRAP_TOKEN</code> or on stdin.
      </p>
      <button type="button" onClick={onDone}>
        I have copied it
      </button>
    </section>
  );
}

function RegisterSoul({ onIssued }: { onIssued(t: IssuedToken): void }) {
  const [sid, setSid] = useState('');
  const [covens, setCovens] = useState('');
  const action = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    const soul = await action.run(() =>
      api<Soul & IssuedToken>('POST', '/v1/souls', { sid: sid.trim(), transport: 'agent', covens: splitList(covens) }),
    );
    if (soul) {
      setSid('');
      setCovens('');
      onIssued(soul);
    }
  };
  return (
    <form class="inline-form" onSubmit={submit} aria-label="Register a soul">
      <h3>Register a soul</h3>
      <label>
        SID (the host's FQDN){' '}
        <input
          name="sid"
          value={sid}
          required
          onInput={(e) => setSid((e.target as HTMLInputElement).value)}
          placeholder="web-1.prod.example.com"
        />
      </label>
      <label>
        Covens{' '}
        <input
          name="covens"
          value={covens}
          onInput={(e) => setCovens((e.target as HTMLInputElement).value)}
          placeholder="web, eu-west"
        />
      </label>
      <button type="submit" disabled={action.busy}>
        Register
      </button>
      <Busy busy={action.busy} label="Registering…" />
      <ErrorBox error={action.error} />
    </form>
  );
}

export function Souls() {
  const [filter, setFilter] = useState<{ status: string; coven: string; sid: string }>({
    status: '',
    coven: '',
    sid: '',
  });
  const pager = usePager();
  const query = new URLSearchParams({ limit: String(PAGE_SIZE), counts: 'true' });
  if (filter.status) query.set('status', filter.status);
  if (filter.coven.trim()) query.set('coven', filter.coven.trim());
  if (filter.sid.trim()) query.set('sid', filter.sid.trim());
  if (pager.cursor) query.set('cursor', pager.cursor);
  const path = `/v1/souls?${query.toString()}`;
  const souls = usePoll(() => api<SoulPage>('GET', path), POLL_MS, [path]);
  const setFilterAndReset = (f: Partial<typeof filter>) => {
    pager.reset();
    setFilter({ ...filter, ...f });
  };
  const [issued, setIssued] = useState<IssuedToken>();
  const [confirmFor, setConfirmFor] = useState<string>();
  const reissue = useAction();

  const issue = async (sid: string, force: boolean) => {
    setConfirmFor(undefined);
    const result = await reissue.run(async () => {
      try {
        return await api<IssuedToken>('POST', `/v1/souls/${enc(sid)}/issue-token`, force ? { force: true } : undefined);
      } catch (err) {
        // An active token: ask before marking it used, instead of showing the conflict as a failure.
        if (err instanceof Problem && err.status === 409 && !force) {
          setConfirmFor(sid);
          return undefined;
        }
        throw err;
      }
    });
    if (result) {
      setIssued(result);
      souls.refresh();
    }
  };

  const now = new Date();
  return (
    <section>
      <h2>Souls</h2>
      {issued && <TokenPanel issued={issued} onDone={() => setIssued(undefined)} />}
      <Granted permission="souls:create" what="register souls">
        <RegisterSoul
          onIssued={(t) => {
            setIssued(t);
            souls.refresh();
          }}
        />
      </Granted>
      <Busy busy={reissue.busy} label="Issuing a token…" />
      <ErrorBox error={reissue.error} />
      {confirmFor && (
        <ConfirmDialog
          title="Replace the active token?"
          confirm="Issue a new token"
          onConfirm={() => void issue(confirmFor, true)}
          onCancel={() => setConfirmFor(undefined)}
        >
          <p>
            {confirmFor} still has an unused, unexpired bootstrap token. Issuing a new one marks it used: a{' '}
            <code>soul init</code> with the old token will fail.
          </p>
        </ConfirmDialog>
      )}
      <Counts counts={souls.data?.counts} status={filter.status} onStatus={(status) => setFilterAndReset({ status })} />
      <form class="filters" aria-label="Filter souls" onSubmit={(e) => e.preventDefault()}>
        <label>
          SID contains{' '}
          <input
            name="sid-search"
            value={filter.sid}
            placeholder="web-1"
            onInput={(e) => setFilterAndReset({ sid: (e.target as HTMLInputElement).value })}
          />
        </label>
        <label>
          Coven{' '}
          <input
            name="coven-filter"
            value={filter.coven}
            placeholder="web"
            onInput={(e) => setFilterAndReset({ coven: (e.target as HTMLInputElement).value })}
          />
        </label>
        <label>
          Status
          <select
            name="status-filter"
            value={filter.status}
            onChange={(e) => setFilterAndReset({ status: (e.target as HTMLSelectElement).value })}
          >
            <option value="">any</option>
            {STATUSES.map((st) => (
              <option key={st} value={st}>
                {st}
              </option>
            ))}
          </select>
        </label>
      </form>
      <ErrorBox error={souls.error} />
      <p class="muted" data-testid="souls-updated">
        {souls.updatedAt ? `Live: updated ${souls.updatedAt.toLocaleTimeString()}` : 'Loading…'}
      </p>
      {souls.data && (
        <table class="grid" data-testid="souls-table">
          <thead>
            <tr>
              <th>SID</th>
              <th>Status</th>
              <th>Covens</th>
              <th>Last seen</th>
              <th>Certificate</th>
              <th>Soulprint</th>
              <th></th>
            </tr>
          </thead>
          <tbody>
            {souls.data.items.length === 0 && (
              <tr>
                <td colSpan={7} class="muted">
                  {filter.status || filter.coven || filter.sid
                    ? 'No soul matches these filters.'
                    : 'No souls registered yet.'}
                </td>
              </tr>
            )}
            {souls.data.items.map((s) => (
              <tr key={s.sid} data-sid={s.sid}>
                <td>{s.sid}</td>
                <td>
                  <StatusBadge status={s.status} />
                </td>
                <td>
                  {s.covens.map((c) => (
                    <span class="tag" key={c}>
                      {c}
                    </span>
                  ))}
                </td>
                <td>
                  <Ago at={s.ssh ? (s.last_contact_at ?? null) : s.last_seen_at} now={now} />
                </td>
                <td>{s.ssh ? <SshReach soul={s} /> : <CertExpiry at={s.cert_not_after} now={now} />}</td>
                <td>
                  <Soulprint print={s.soulprint} />
                </td>
                <td>
                  {s.status === 'pending' && !s.ssh && (
                    <Granted permission="souls:issue-token" what="reissue tokens" quiet>
                      <button type="button" disabled={reissue.busy} onClick={() => void issue(s.sid, false)}>
                        Reissue token
                      </button>
                    </Granted>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {souls.data && (
        <PagerBar
          label="souls"
          page={pager.page}
          hasPrevious={pager.page > 1}
          nextCursor={souls.data.next_cursor}
          onPrevious={pager.previous}
          onNext={pager.next}
        />
      )}
    </section>
  );
}
