// Apply exactly the plan (docs/plans.md): before a host's first step, its steps are checked again
// in check mode and compared with what the plan saw there. Any difference is drift: the host is
// refused, nothing is sent to it for real, and the run locks with nothing committed.
// Compared per step: whether it would run (status), whether it would change something, and the
// soul's description of the change (file hashes, mode, owner, group, content diff; package
// versions). The facts render read (the soulprint stored with the plan, the facts its render read
// of it) are compared as well.
import { isDeepStrictEqual } from 'node:util';
import type { StepRow } from '../../db/repos/runs';

const brief = (v: unknown) => {
  const s = v === null || v === undefined ? 'nothing' : JSON.stringify(v);
  return s.length > 240 ? `${s.slice(0, 240)}…` : s;
};

/** A leaf of a diff as read: a keyed digest shortened to 12 characters, anything else as JSON (bounded). */
function leafText(v: unknown): string {
  if (v === undefined || v === null) return 'none';
  if (typeof v === 'string' && /^(sha256:|hmac-sha256:)?[0-9a-f]{32,}$/.test(v))
    return `${v.replace(/^[a-z0-9-]+:/, '').slice(0, 12)}…`;
  return brief(v);
}

/**
 * A diff (docs/plans.md: file digests, sizes, mode, owner, group; package versions) as its leaves by
 * path, e.g. `content.after.digest`. The unified text is left out: the digests already say the
 * content differs, and the text may be long.
 */
function leaves(v: unknown, at = '', out = new Map<string, unknown>()): Map<string, unknown> {
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
    for (const [k, x] of Object.entries(v as Record<string, unknown>))
      if (k !== 'unified') leaves(x, at ? `${at}.${k}` : k, out);
  } else if (at) out.set(at, v);
  return out;
}

/** One readable clause per diff field that differs: `content.after.digest: the plan saw 1a2b…, now 9f8e…`. */
function diffDrift(planned: unknown, now: unknown): string[] {
  const a = leaves(planned);
  const b = leaves(now);
  const keys = [...new Set([...a.keys(), ...b.keys()])].sort();
  const differ = keys.filter((k) => !isDeepStrictEqual(a.get(k), b.get(k)));
  if (planned === null || now === null)
    return [
      `the plan saw ${planned === null ? 'no change' : 'a change'}, now ${now === null ? 'no change' : 'a change'}`,
    ];
  if (differ.length === 0) return ['the content diff differs'];
  return differ.map((k) => `${k}: the plan saw ${leafText(a.get(k))}, now ${leafText(b.get(k))}`);
}

function stepVerdict(r: StepRow | undefined): { status: string; changed: boolean; diff: unknown } {
  return r
    ? { status: r.status, changed: r.changed, diff: r.diff ?? null }
    : { status: 'absent', changed: false, diff: null };
}

/** One line per difference between the plan's check of a host and the check just made; [] when none. */
export function stepDrift(planned: StepRow[], now: StepRow[]): string[] {
  const byIndex = new Map(now.map((r) => [r.step_index, r]));
  const out: string[] = [];
  for (const p of planned) {
    const a = stepVerdict(p);
    const b = stepVerdict(byIndex.get(p.step_index));
    if (isDeepStrictEqual(a, b)) continue;
    const name = `step ${p.step_index} (${p.name ?? p.module})`;
    if (a.status !== b.status) out.push(`${name}: the plan saw it ${a.status}, now it is ${b.status}`);
    else if (a.changed !== b.changed)
      out.push(
        `${name}: the plan saw ${a.changed ? 'a change to make' : 'nothing to change'}, now ${b.changed ? 'there is a change to make' : 'nothing to change'}`,
      );
    else out.push(`${name}: ${diffDrift(a.diff, b.diff).join(', ')}`);
  }
  return out;
}

// The facts render read for the host against its facts now (only those: scenario/render/reads.ts).
export { factsDrift } from '../../scenario/render/reads';
