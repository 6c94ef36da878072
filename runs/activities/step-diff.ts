// What the keeper keeps and shows of a soul's diff (docs/secrets.md "Diffs and hashes", issue 28):
// - Every content hash is keyed. The soul describes a file by the SHA-256 of its bytes; the keeper
//   replaces each one, before anything stores or shows it, by an HMAC-SHA256 of that hash under a
//   key of its own (derived from the cluster's signing key with a label). A viewer can still see
//   that two contents are equal, never confirm a guessed content offline. Every keeper derives the
//   same key, so a plan and the check made when it is applied compare like with like.
// - A step whose file holds or will hold a secret ("secret step") shows no content at all: the soul
//   is not asked for a unified diff, any it sends is dropped, and sizes go too (a size tells a
//   secret's length). The content says only `secret: true` and "secret content changed".
// A step is a secret step when its params carry a secret now (holdsSecret), or when the keeper's
// records say the file may hold one: a recorded step of that path on that host carried a secret and
// no run since wrote non-secret content there (db/repos/step-secrets.ts), or an earlier step of
// this host's plan with the same path carries one.
import { createHmac, randomBytes } from 'node:crypto';
import path from 'node:path';
import type { PlanStep } from '../../scenario/render/plan';
import type { StepSender } from './deps';
import { holdsSecret } from './secrets';

/** What the diff of a secret step says instead of its content. */
export const SECRET_CHANGED = 'secret content changed';

/** The keeper's content-digest key: its own label, so it is no other key derived from the same secret. */
export function contentDigestKey(signingKey: Uint8Array | undefined): Buffer {
  // Without the cluster's key (never in a keeper process) the digests are only this process's own.
  return createHmac('sha256', signingKey ?? randomBytes(32))
    .update('keeper content digests v1')
    .digest();
}

/** The keyed digest of a content the soul described by its plain SHA-256 (hex). */
export function keyedDigest(key: Buffer, plainSha256: string): string {
  return createHmac('sha256', key).update(plainSha256).digest('hex');
}

/** The path a step manages, canonical as the soul reads it; null for a step without one. */
export function stepPath(params: unknown): string | null {
  const p = (params as { path?: unknown } | null)?.path;
  return typeof p === 'string' && p.startsWith('/') ? path.posix.resolve(p) : null;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Every `sha256` anywhere in the diff becomes `digest` (keyed); for a secret step sizes go too. */
function keyHashes(v: unknown, key: Buffer, secret: boolean): unknown {
  if (Array.isArray(v)) return v.map((x) => keyHashes(x, key, secret));
  if (!isObject(v)) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    if (k === 'sha256') {
      if (typeof x === 'string') out.digest = keyedDigest(key, x);
      continue;
    }
    if (secret && k === 'size') continue;
    out[k] = keyHashes(x, key, secret);
  }
  return out;
}

/**
 * The diff as the keeper stores and shows it. `withheld` says why a step that carries no secret
 * itself is a secret step: the file it read is a copy or link of a secret file (host-boundary.ts).
 */
export function keeperDiff(
  diff: Record<string, unknown>,
  key: Buffer,
  secret: boolean,
  withheld?: string,
): Record<string, unknown> {
  const out = keyHashes(diff, key, secret) as Record<string, unknown>;
  if (secret && isObject(out.content)) {
    const { before, after } = out.content;
    out.content = {
      secret: true,
      note: SECRET_CHANGED,
      ...(withheld === undefined ? {} : { withheld }),
      ...(before === undefined ? {} : { before }),
      ...(after === undefined ? {} : { after }),
    };
  }
  return out;
}

/**
 * Which steps of a host are secret steps: the recorded taint of (host, path), then this plan's own
 * order (a step writing a path after a step of this plan that put a secret there).
 */
export function secretSteps(steps: PlanStep[], tainted: ReadonlySet<string>): Set<number> {
  const held = new Set(tainted);
  const out = new Set<number>();
  for (const step of steps) {
    const p = stepPath(step.params);
    const carries = holdsSecret(step.params);
    if (carries || (p !== null && held.has(p))) out.add(step.index);
    if (carries && p !== null) held.add(p);
  }
  return out;
}

/** Why an answer's diff must show no content though its step was not known to be secret, or null. */
export type WithheldBy = (answer: Awaited<ReturnType<StepSender['sendStep']>>) => string | null;

/**
 * The transport as the dispatch uses it: a secret step is never asked for content, and every answer's
 * diff is made the keeper's (keyed hashes; no content of a secret step, nor of a step `withheldBy`
 * names a reason for) before anything reads it. The files' identities stop here.
 */
export function diffGuard(
  inner: StepSender,
  key: Buffer,
  secret: ReadonlySet<number>,
  withheldBy?: WithheldBy,
): StepSender {
  return {
    isConnected: (sid) => inner.isConnected(sid),
    async sendStep(sid, step, opts) {
      const isSecret = secret.has(step.stepIndex) || holdsSecret(step.params);
      const asked = step.showContent === undefined ? step : { ...step, showContent: step.showContent && !isSecret };
      const { files: _files, ...answer } = await inner.sendStep(sid, asked, opts);
      if (answer.diff === undefined) return answer;
      const why = isSecret ? null : (withheldBy?.({ ...answer, ...(_files ? { files: _files } : {}) }) ?? null);
      return {
        ...answer,
        diff: why === null ? keeperDiff(answer.diff, key, isSecret) : keeperDiff(answer.diff, key, true, why),
      };
    },
  };
}
