// One live event stream of one soul on this keeper: its identity (from the certificate), its
// presence epoch, heartbeat bookkeeping, and the step requests in flight on it. A step result is
// matched only against requests sent on this same session, so no other stream (another soul's
// certificate included) can answer or cancel them.
import { randomUUID } from 'node:crypto';
import { redactions, revealJson, type SecretValue } from '../common/secret';
import type {
  FileIdentityMsg,
  GoodbyeReason,
  KeeperMessage,
  Soulprint,
  StepProgress,
  StepResultMsg,
} from '../proto/types';
import { StepCancelled, StepInterrupted, StepTimeout } from './dispatch-errors';

/** What the session writes to: the gRPC call in production, an array in unit tests. */
export interface SessionSink {
  write(msg: KeeperMessage): void;
  end(): void;
}

export interface StepOrder {
  applyId: string;
  stepIndex: number;
  /** `core.<module>.<state>` */
  module: string;
  params: Record<string, unknown>;
  dryRun?: boolean;
  /** Check mode only: the soul may answer a unified diff of a file's content (never for a step with a secret). */
  showContent?: boolean;
  /** A module shipped with the service (`<service>.<module>.<state>`): its program (bytes base64). */
  program?: { sha256: string; content: string; dry_run: boolean; timeout_ms: number; runtime?: string };
  /** Values the soul scrubs from its output and ledger (runs/activities/host-boundary.ts). */
  redact?: SecretValue[];
  /** The text the soul keeps and answers instead of the output. */
  withhold?: string;
}

export interface StepReport {
  requestId: string;
  applyId: string;
  stepIndex: number;
  changed: boolean;
  ok: boolean;
  output: string;
  startedAt: Date;
  finishedAt: Date;
  /** Answered from the soul's ledger: the step had been applied before and was not applied again. */
  replayed: boolean;
  /** What changed or would change (check mode), as the soul described it; absent when nothing. */
  diff?: Record<string, unknown>;
  /** The files the step read and wrote, by identity (the keeper's secret taint, host-boundary.ts). */
  files?: FileIdentityMsg[];
}

/** More file identities than a file module reports (read and written) are not a soul's answer. */
export const MAX_FILE_IDENTITIES = 8;
const DIGEST = /^[0-9a-f]{64}$/;
const FILE_ID = /^\d{1,20}:\d{1,20}:\d{1,25}$/;

/**
 * The well-formed file identities of a soul's answer (agent/state/content-identity.ts), at most
 * MAX_FILE_IDENTITIES; absent when none. A malformed one is dropped: it could match nothing.
 */
export function parseFiles(raw: unknown): FileIdentityMsg[] | undefined {
  if (!Array.isArray(raw)) return undefined;
  const out = raw
    .filter(
      (f): f is FileIdentityMsg =>
        f !== null &&
        typeof f === 'object' &&
        typeof f.path === 'string' &&
        f.path.length <= 4096 &&
        (f.role === 'read' || f.role === 'written') &&
        typeof f.digest === 'string' &&
        DIGEST.test(f.digest) &&
        typeof f.file_id === 'string' &&
        FILE_ID.test(f.file_id),
    )
    .slice(0, MAX_FILE_IDENTITIES)
    .map((f) => ({ path: f.path, role: f.role, digest: f.digest, file_id: f.file_id }));
  return out.length > 0 ? out : undefined;
}

/** `{files}` when the answer holds any well-formed identity, else nothing. */
export function optionalFiles(raw: unknown): { files?: FileIdentityMsg[] } {
  const files = parseFiles(raw);
  return files ? { files } : {};
}

/** A soul's diff larger than this is replaced by a note: it is stored with every plan and run. */
export const MAX_DIFF_JSON = 64 * 1024;

/** The soul's diff_json, bounded: a soul cannot make the keeper store an unbounded document. */
export function parseDiff(json: string | undefined): Record<string, unknown> | undefined {
  if (!json) return undefined;
  if (json.length > MAX_DIFF_JSON)
    return { truncated: `the soul's diff was ${json.length} bytes, more than ${MAX_DIFF_JSON}` };
  try {
    const v: unknown = JSON.parse(json);
    return v !== null && typeof v === 'object' && !Array.isArray(v)
      ? (v as Record<string, unknown>)
      : { invalid: 'the soul sent a diff that is not a JSON object' };
  } catch {
    return { invalid: 'the soul sent a diff that is not JSON' };
  }
}

export interface SendStepOptions {
  timeoutMs: number;
  onProgress?: (message: string) => void;
  signal?: AbortSignal;
}

interface Pending {
  resolve(r: StepReport): void;
  reject(e: Error): void;
  onProgress?: (message: string) => void;
}

export class Session {
  readonly connectedAt = Date.now();
  lastHeartbeat = Date.now();
  /** The registry snapshot has recorded this session as connected (retried until it has). */
  recorded = false;
  /** When last_seen_at was last written for this session. */
  lastSeenWritten = Date.now();
  /** Lease released and snapshot updated: the keeper is done with this session. */
  ended = false;
  /** The soul's certificate was renewed on this stream: new steps wait for its next stream. */
  rotating = false;
  /** A renewal request is being answered (one at a time per stream). */
  renewing = false;
  /** The serial (normalSerial) of the certificate this stream was opened with; null when not known. */
  serial: string | null = null;
  private closedReason: string | null = null;
  private readonly pending = new Map<string, Pending>();
  private idleWaiters: (() => void)[] = [];
  /** Waiting for the soul's next Facts to be recorded (asked with refresh_facts). */
  private factsWaiters: ((recorded: boolean) => void)[] = [];

  constructor(
    readonly id: string,
    readonly sid: string,
    readonly epoch: number,
    public soulprint: Soulprint,
    private readonly sink: SessionSink,
  ) {}

  get closed(): boolean {
    return this.closedReason !== null;
  }
  get inFlight(): number {
    return this.pending.size;
  }

  /** Resolves once no step is in flight on this session (at once when none is). */
  whenIdle(): Promise<void> {
    if (this.pending.size === 0 || this.closed) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private settled(requestId: string): void {
    this.pending.delete(requestId);
    if (this.pending.size === 0 && this.idleWaiters.length > 0) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const w of waiters) w();
    }
  }

  write(msg: KeeperMessage): void {
    if (!this.closed) this.sink.write(msg);
  }

  /**
   * Asks the soul for its facts now; resolves true once its answer is in the registry, false when
   * it did not answer within `timeoutMs` (a soul that predates refresh_facts ignores it) or the
   * stream ended.
   */
  refreshFacts(timeoutMs: number): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    return new Promise((resolve) => {
      const waiter = (recorded: boolean) => {
        clearTimeout(timer);
        resolve(recorded);
      };
      const timer = setTimeout(() => {
        this.factsWaiters = this.factsWaiters.filter((w) => w !== waiter);
        resolve(false);
      }, timeoutMs);
      this.factsWaiters.push(waiter);
      this.write({ refresh_facts: {} });
    });
  }

  /** The soul's Facts were written to the registry (or the write failed): answers the waiters. */
  factsRecorded(recorded: boolean): void {
    for (const w of this.factsWaiters.splice(0)) w(recorded);
  }

  sendStep(step: StepOrder, opts: SendStepOptions): Promise<StepReport> {
    const requestId = randomUUID();
    if (this.closed) return Promise.reject(new StepInterrupted(this.sid, requestId, this.closedReason ?? 'closed'));
    if (opts.signal?.aborted) return Promise.reject(new StepCancelled(this.sid, requestId));
    return new Promise<StepReport>((resolve, reject) => {
      const finish = () => {
        clearTimeout(timer);
        opts.signal?.removeEventListener('abort', onAbort);
        this.settled(requestId);
      };
      const giveUp = (err: Error, reason: string) => {
        finish();
        this.write({ cancel: { request_id: requestId, reason } });
        reject(err);
      };
      const timer = setTimeout(
        () => giveUp(new StepTimeout(this.sid, requestId, opts.timeoutMs), 'timeout'),
        opts.timeoutMs,
      );
      const onAbort = () => giveUp(new StepCancelled(this.sid, requestId), 'cancelled');
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      this.pending.set(requestId, {
        resolve: (r) => {
          finish();
          resolve(r);
        },
        reject: (e) => {
          finish();
          reject(e);
        },
        onProgress: opts.onProgress,
      });
      this.write({
        step_request: {
          request_id: requestId,
          apply_id: step.applyId,
          step_index: step.stepIndex,
          module: step.module,
          params_json: revealJson(step.params),
          dry_run: step.dryRun === true,
          show_content: step.dryRun === true && step.showContent === true,
          redact_json: step.redact?.length ? JSON.stringify(redactions(step.redact)) : '',
          withhold: step.withhold ?? '',
          program: step.program
            ? {
                sha256: step.program.sha256,
                content_base64: step.program.content,
                dry_run: step.program.dry_run,
                timeout_ms: step.program.timeout_ms,
                runtime: step.program.runtime ?? '',
              }
            : null,
        },
      });
    });
  }

  /** A step_result from the soul. Returns false when no request of this session matches it. */
  onResult(r: StepResultMsg): boolean {
    const p = this.pending.get(r.request_id);
    if (!p) return false;
    p.resolve({
      requestId: r.request_id,
      applyId: r.apply_id,
      stepIndex: r.step_index,
      changed: r.changed,
      ok: r.ok,
      output: r.output,
      startedAt: new Date(r.started_at_ms),
      finishedAt: new Date(r.finished_at_ms),
      replayed: r.replayed,
      ...(r.diff_json ? { diff: parseDiff(r.diff_json) } : {}),
      ...optionalFiles(r.files),
    });
    return true;
  }

  onProgress(p: StepProgress): boolean {
    const pending = this.pending.get(p.request_id);
    if (!pending) return false;
    try {
      pending.onProgress?.(p.message);
    } catch {
      /* a caller's callback must not break the stream */
    }
    return true;
  }

  /** Ends the session: a goodbye first when the soul should know why, then the stream. Idempotent. */
  close(reason: string, goodbye?: GoodbyeReason): void {
    if (this.closed) return;
    if (goodbye) this.sink.write({ goodbye: { reason: goodbye } });
    this.closedReason = reason;
    for (const [id, p] of this.pending) p.reject(new StepInterrupted(this.sid, id, reason));
    for (const w of this.idleWaiters.splice(0)) w();
    this.factsRecorded(false);
    this.sink.end();
  }
}
