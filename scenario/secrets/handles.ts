/**
 * The handles a stored plan carries (issue 28). A step's text holds `«secret:<n>»`; the step's
 * `secrets[n]` names the path and field, with a MAC by the keeper over the run binding (the
 * apply_id that rendered the plan), the host, the step index, n, the path and the field. The
 * dispatching keeper resolves an entry only when its MAC verifies for the run, host and step it is
 * sending, so a plan row edited, copied to another host or step, or replayed in another run reads
 * nothing.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { StepSecret } from '../render/plan';

/** The MAC key, derived from the keeper's key with its own label (never the signing key itself). */
export function deriveHandleKey(keeperKey: Uint8Array): Buffer {
  return createHmac('sha256', keeperKey).update('keeper secret handles v1').digest();
}

export interface HandleBinding {
  binding: string;
  sid: string;
  index: number;
  n: number;
}

function mac(key: Uint8Array, b: HandleBinding, path: string, field: string): Buffer {
  // NUL separates the parts: none of them can hold one (paths and fields are canonical, sids and apply_ids are names).
  return createHmac('sha256', key)
    .update([b.binding, b.sid, String(b.index), String(b.n), path, field].join('\0'))
    .digest();
}

export function signHandle(key: Uint8Array, b: HandleBinding, path: string, field: string): StepSecret {
  return { path, field, mac: mac(key, b, path, field).toString('hex') };
}

export function verifyHandle(key: Uint8Array, b: HandleBinding, entry: StepSecret): boolean {
  if (
    typeof entry?.mac !== 'string' ||
    typeof entry.path !== 'string' ||
    typeof entry.field !== 'string' ||
    !/^[0-9a-f]{64}$/.test(entry.mac)
  )
    return false;
  return timingSafeEqual(Buffer.from(entry.mac, 'hex'), mac(key, b, entry.path, entry.field));
}
