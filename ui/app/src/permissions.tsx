// What the signed-in operator may do, as the registry says now (GET /v1/archons/{aid}: its role may
// have changed since its token was issued). Every write control reads it and is hidden, with the
// reason where a whole form would have been, when its permission is not granted; nothing shows
// before the answer arrives, so a viewer never sees a form flash. The keeper still checks every
// call: this only spares an operator a form it would refuse.
import type { ComponentChildren } from 'preact';
import { permits } from '../../../api/roles';
import { api } from './api';
import { usePoll } from './hooks';
import { currentAid } from './session';

interface Mine {
  aid: string;
  role: string;
  permissions: string[];
}

// One request serves every control of a page: each reads through this cache, kept 5 s.
let cached: { aid: string; at: number; value: Promise<Mine> } | null = null;

function loadMine(): Promise<Mine> {
  const aid = currentAid();
  if (aid === null) return Promise.reject(new Error('no operator signed in'));
  if (cached && cached.aid === aid && Date.now() - cached.at < 5_000) return cached.value;
  const value = api<Mine>('GET', `/v1/archons/${encodeURIComponent(aid)}`);
  cached = { aid, at: Date.now(), value };
  value.catch(() => {
    if (cached?.value === value) cached = null;
  });
  return value;
}

export interface Permissions {
  /** The registry has answered (until then every control is hidden). */
  known: boolean;
  role: string | null;
  may(permission: string): boolean;
}

export function usePermissions(): Permissions {
  const mine = usePoll(loadMine, 15_000);
  const granted = mine.data?.permissions ?? [];
  return {
    known: mine.data !== undefined,
    role: mine.data?.role ?? null,
    may: (p) => permits(granted, p),
  };
}

/**
 * Its children when the operator holds `permission`; otherwise nothing visible (`quiet`, for a
 * button in a row) or one line naming the role and what it lacks (for a form: the operator learns why it is not
 * there instead of hunting for it).
 */
export function Granted(props: { permission: string; what: string; quiet?: boolean; children: ComponentChildren }) {
  const perms = usePermissions();
  if (!perms.known) return null;
  if (perms.may(props.permission)) return <>{props.children}</>;
  // A hidden mark keeps the decision inspectable (tests, a curious operator's devtools).
  if (props.quiet) return <span hidden data-not-granted-quiet data-permission={props.permission} />;
  return (
    <p class="muted not-granted" data-testid="not-granted" data-permission={props.permission}>
      Your role ({perms.role}) may not {props.what} (needs <code>{props.permission}</code>).
    </p>
  );
}
