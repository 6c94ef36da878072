// Sign in by pasting an operator JWT. The token is checked against the keeper before it is kept: a
// 401 shows the keeper's reason and keeps nothing; any other answer means the token is accepted
// (a 403 only says this operator may not list souls). The reason for a forced sign-out shows here;
// signing in returns to the page asked for (`?next=`, a path of the UI only).
import { useState } from 'preact/hooks';
import { Problem } from '../api';
import { Busy, ErrorBox } from '../components';
import { useAction } from '../hooks';
import { navigate } from '../router';
import { safeReturn, signIn, signInReason } from '../session';

async function checkToken(token: string): Promise<void> {
  let res: Response;
  try {
    res = await fetch('/v1/souls?limit=1', { headers: { Authorization: `Bearer ${token}` }, cache: 'no-store' });
  } catch (err) {
    throw new Problem(
      0,
      'Network error',
      `the keeper is not reachable (${err instanceof Error ? err.message : String(err)})`,
    );
  }
  if (res.status === 401) {
    const body = (await res.json().catch(() => ({}))) as { detail?: string };
    throw new Problem(401, 'Unauthorized', body.detail ?? 'the token is not accepted');
  }
}

export function SignIn() {
  const [token, setToken] = useState('');
  const action = useAction();
  const reason = signInReason();
  const submit = async (e: Event) => {
    e.preventDefault();
    const t = token.trim();
    const ok = await action.run(async () => {
      await checkToken(t);
      return true;
    });
    if (ok) {
      signIn(t);
      // Back to the page the operator asked for (a deep link, or where a forced sign-out happened).
      navigate(safeReturn(new URLSearchParams(location.search).get('next')) ?? '/ui/', { replace: true });
    }
  };
  return (
    <main class="signin">
      <h1>Keeper</h1>
      {reason && !action.error && (
        <div class="notice" role="alert" data-testid="signin-reason">
          You were signed out: {reason}
        </div>
      )}
      <form onSubmit={submit}>
        <label for="token">Operator token (JWT)</label>
        <textarea
          id="token"
          name="token"
          rows={5}
          autocomplete="off"
          spellcheck={false}
          value={token}
          placeholder="eyJhbGciOiJIUzI1NiIs…"
          onInput={(e) => setToken((e.target as HTMLTextAreaElement).value)}
        />
        <p class="muted">
          Kept in this browser's open tabs only (session storage, shared between its tabs) and sent as a Bearer header;
          it never appears in a URL.
        </p>
        <button type="submit" disabled={action.busy || token.trim() === ''}>
          Sign in
        </button>
        <Busy busy={action.busy} label="Checking the token…" />
      </form>
      <ErrorBox error={action.error} />
    </main>
  );
}
