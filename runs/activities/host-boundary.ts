// One secret boundary for every output of a host (issue 45, H-1 and H-3; docs/secrets.md "Output").
// Runs, plans, drift checks (dispatch.ts) and executions (execute.ts) send a host its steps through
// the one sender built here, so every answer is treated alike before anything stores or shows it:
// - its output, progress and diff are scrubbed of every secret value the keeper knows the host holds:
//   the secrets any run, plan, drift check or execution ever sent it (soul_secrets), read fresh from
//   the store, and those of this dispatch. So a later `cat` of a secret file, `nginx -T` or
//   `systemctl cat` shows the placeholder, whichever step or execution printed it. The scrub is a
//   literal replace, cheap on output the keeper caps anyway; a transformed value (base64, rev, od)
//   is not recognised, which is why the next rule exists;
// - a step that may read a tainted path (its params name a file a secret was written to, other than
//   the file it manages itself) has its output withheld, unless the scenario marks it `output: safe`;
// - the diff guard (step-diff.ts): keyed digests only, and no content, size or plain hash for a step
//   whose file holds or will hold a secret, by the same taint for runs and executions.
// - a copy or hard link of a secret file (issue 45, M-1): the soul reports each file a file module
//   read and wrote by identity (a keyed digest of its content, its inode); a step that writes a
//   secret records its file's (secret_files), and a later step that reads a file of the same digest
//   (`cp`, an application's `.bak`) or inode (`ln`) is treated as reading a tainted path: no
//   content in its diff (it says why) and its output withheld unless `output: safe`. The soul can
//   only say what it read after reading it, so such a plan's unified diff reaches the keeper and is
//   dropped here, before anything stores or shows it;
// When the store cannot be read, the values to scrub are not known: that host's output is withheld
// and no content is shown, and the step itself still runs (the outage table: what needs no secret
// goes on).
import type { Knex } from 'knex';
import { SecretValue, pathProblem, scrubValues, underPrefix, type SecretRef } from '../../common/secret';
import {
  recordSecretFiles,
  recordSoulSecrets,
  secretFiles,
  soulSecretRefs,
  taintedPaths,
  type SecretFile,
} from '../../db/repos/step-secrets';
import type { FileIdentityMsg } from '../../proto/types';
import type { PlanStep } from '../../scenario/render/plan';
import type { StepSender } from './deps';
import { holdsSecret, type DispatchSecrets } from './secrets';
import { diffGuard, secretSteps, stepPath } from './step-diff';

/** What the keeper knows of one host's secrets. */
export interface HostBoundary {
  /** Paths of the host a secret was written to (by the records; not by this dispatch's own steps). */
  tainted: Set<string>;
  /** Every value the host holds, as far as the keeper knows: scrubbed from each of its outputs. */
  values: SecretValue[];
  /** Set when those values could not be read: then every output of the host is withheld. */
  unreadable?: string;
  /** The files of the host a secret was written to, by identity (their copies and links are treated alike). */
  files?: SecretFile[];
  /** Records the files this dispatch writes a secret to (secret_files). */
  remember?: (files: SecretFile[]) => Promise<void>;
}

const refKey = (r: SecretRef) => `${r.path}#${r.field}`;

/**
 * Records the secrets this dispatch sends (`sending`, before anything is sent, so a step that fails
 * half way still counts) and answers each host's boundary: its tainted paths and the values to scrub.
 */
export async function hostBoundaries(
  db: Knex,
  secrets: DispatchSecrets | undefined,
  sids: string[],
  sending: Map<string, SecretValue[]>,
): Promise<Map<string, HostBoundary>> {
  await recordSoulSecrets(
    db,
    [...sending].map(([sid, values]) => ({ sid, refs: values.map((v) => v.ref) })),
  );
  const [tainted, known, files] = await Promise.all([
    taintedPaths(db, sids),
    soulSecretRefs(db, sids),
    secretFiles(db, sids),
  ]);
  // One read per store path for the whole dispatch; values are never cached beyond it.
  const reads = new Map<string, Promise<Record<string, unknown> | Error | null>>();
  const read = (path: string) => {
    let p = reads.get(path);
    if (!p) {
      p =
        secrets && pathProblem(path) === null && underPrefix(path, secrets.scenarioPrefix)
          ? secrets.reader.readFields(path).catch((err: unknown) =>
              // A secret deleted since it was sent has no value left to scrub; anything else is an outage.
              (err as { kind?: string }).kind === 'not_found'
                ? null
                : err instanceof Error
                  ? err
                  : new Error(String(err)),
            )
          : Promise.resolve(null);
      reads.set(path, p);
    }
    return p;
  };
  const out = new Map<string, HostBoundary>();
  for (const sid of sids) {
    const values = new Map<string, SecretValue>();
    for (const v of sending.get(sid) ?? []) values.set(refKey(v.ref), v);
    let unreadable: string | undefined;
    for (const ref of known.get(sid) ?? []) {
      if (values.has(refKey(ref))) continue;
      const fields = await read(ref.path);
      if (fields instanceof Error) {
        unreadable = `the secrets store could not be read to scrub this host's output of its secrets (${fields.message})`;
        break;
      }
      const v = fields?.[ref.field];
      if (typeof v === 'string' && v !== '') values.set(refKey(ref), new SecretValue(ref, v));
    }
    out.set(sid, {
      tainted: tainted.get(sid) ?? new Set(),
      values: [...values.values()],
      ...(unreadable ? { unreadable } : {}),
      files: files.get(sid) ?? [],
      remember: (written) => recordSecretFiles(db, sid, written),
    });
  }
  return out;
}

/** Every plain string of `v` (a secret's own text is not the step's: it is scrubbed, not read). */
function strings(v: unknown, out: string[]): string[] {
  if (typeof v === 'string') out.push(v);
  else if (Array.isArray(v)) for (const x of v) strings(x, out);
  else if (v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype)
    for (const x of Object.values(v)) strings(x, out);
  return out;
}

/**
 * The tainted path a step may read, or null: a path of `tainted` named anywhere in its params (a
 * command's argument, a validate command, a source), other than the file the step manages itself,
 * whose content the diff guard already covers.
 */
export function readsTainted(params: Record<string, unknown>, tainted: ReadonlySet<string>): string | null {
  if (tainted.size === 0) return null;
  const own = stepPath(params);
  const { path: _own, ...rest } = params;
  const texts = strings(own === null ? params : rest, []);
  for (const p of tainted) if (texts.some((t) => t.includes(p))) return p;
  return null;
}

export const withheldOutput = (path: string, fix: string) =>
  `output withheld: this step may read ${path}, which holds a secret; ${fix}`;

/**
 * Why a file a step read must be treated as a secret file, or null: the first file it read whose
 * content has the keyed digest of a secret file (a copy), or whose inode is one (a hard link).
 */
export function sameAsSecretFile(
  files: readonly FileIdentityMsg[] | undefined,
  secret: readonly SecretFile[],
): { path: string; why: string } | null {
  if (!files?.length || secret.length === 0) return null;
  for (const f of files) {
    if (f.role !== 'read') continue;
    const copy = secret.find((s) => s.digest === f.digest);
    if (copy) return { path: f.path, why: `content identical to a secret file (${copy.path})` };
    const link = secret.find((s) => s.file_id === f.file_id);
    if (link) return { path: f.path, why: `the same file as a secret file (${link.path}), by a hard link` };
  }
  return null;
}

/** Every string of a diff (keys too) passed through `scrub`: the values, not their JSON text, whose escapes would hide them. */
export function scrubStructured(v: unknown, scrub: (s: string) => string): unknown {
  if (typeof v === 'string') return scrub(v);
  if (Array.isArray(v)) return v.map((x) => scrubStructured(x, scrub));
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[scrub(k)] = scrubStructured(x, scrub);
    return out;
  }
  return v;
}

/** What a scenario step does to show it; an execution has no scenario to say so. */
export const STEP_FIX = 'mark the step `output: safe` to show it';
export const EXECUTION_FIX = 'an execution never shows it (run it as a scenario step marked `output: safe`)';

/**
 * The sender every dispatch uses for one host: the diff guard outside, the scrub and the withholding
 * inside (so the guard sees a scrubbed diff, and the output is scrubbed before it is escaped and
 * capped, which could cut a value in two).
 */
export function boundarySender(
  inner: StepSender,
  digestKey: Buffer,
  boundary: HostBoundary,
  steps: Array<Pick<PlanStep, 'index' | 'params' | 'output_safe'>>,
  fix = STEP_FIX,
): StepSender {
  const { values, unreadable } = boundary;
  // This dispatch's own steps that write a secret taint their path for the steps after them.
  const secret = unreadable ? new Set(steps.map((s) => s.index)) : secretSteps(steps as PlanStep[], boundary.tainted);
  const held = new Set(boundary.tainted);
  const withheld = new Map<number, string>();
  for (const st of steps) {
    const p = st.output_safe ? null : readsTainted(st.params, held);
    if (p !== null) withheld.set(st.index, withheldOutput(p, fix));
    const own = stepPath(st.params);
    if (own !== null && secret.has(st.index)) held.add(own);
  }
  const scrub = (text: string) => (values.length === 0 ? text : scrubValues(text, values));
  // The secret files by identity: the records, then those this dispatch's own steps write.
  const secretFiles = [...(boundary.files ?? [])];
  const safe = new Set(steps.filter((st) => st.output_safe).map((st) => st.index));
  const copyOf = (index: number, params: Record<string, unknown>, files: FileIdentityMsg[] | undefined) =>
    secret.has(index) || holdsSecret(params) ? null : sameAsSecretFile(files, secretFiles);
  const scrubbing: StepSender = {
    isConnected: (sid) => inner.isConnected(sid),
    async sendStep(sid, step, opts) {
      const hidden = unreadable ? `output withheld: ${unreadable}` : withheld.get(step.stepIndex);
      const onProgress = opts.onProgress;
      // Progress is output too: scrubbed, or dropped when the output is withheld.
      const progress = onProgress && { onProgress: (m: string) => (hidden ? undefined : onProgress(scrub(m))) };
      // The soul scrubs (or withholds) the same before its own ledger keeps the output.
      const told = {
        ...step,
        ...(values.length > 0 ? { redact: values } : {}),
        ...(hidden ? { withhold: hidden } : {}),
      };
      const answer = await inner.sendStep(sid, told, progress ? { ...opts, ...progress } : opts);
      await rememberSecretFiles(step, answer);
      const copy = copyOf(step.stepIndex, step.params, answer.files);
      const output =
        hidden ?? (copy && !safe.has(step.stepIndex) ? withheldOutput(copy.path, fix) : scrub(answer.output));
      const diff =
        answer.diff === undefined ? {} : { diff: scrubStructured(answer.diff, scrub) as Record<string, unknown> };
      return { ...answer, output, ...diff };
    },
  };
  // A step that carried a secret and ended with it in its file (written, or already there): that
  // file's identity is a secret file's from now on, for this dispatch and every later one.
  async function rememberSecretFiles(
    step: Parameters<StepSender['sendStep']>[1],
    answer: Awaited<ReturnType<StepSender['sendStep']>>,
  ): Promise<void> {
    const own = stepPath(step.params);
    if (step.dryRun || !answer.ok || own === null || !holdsSecret(step.params)) return;
    const held = (answer.files ?? [])
      .filter((f) => f.path === own && (f.role === 'written' || !answer.changed))
      .map((f) => ({ digest: f.digest, file_id: f.file_id, path: own }));
    if (held.length === 0) return;
    secretFiles.push(...held);
    await boundary.remember?.(held);
  }
  return diffGuard(scrubbing, digestKey, secret, (answer) => copyOf(-1, {}, answer.files)?.why ?? null);
}
