// How a step reaches a soul, the agent stream's or a push channel's (hub/sessions.ts, hub/ssh): the
// types alone, in a file of their own so that deps.ts and the senders that wrap one (secrets.ts,
// step-diff.ts) do not import each other.
import type { SecretValue } from '../../common/secret';
import type { FileIdentityMsg } from '../../proto/types';
import type { StepProgram } from '../../scenario/render/plan';

/** The slice of the hub's Sessions the dispatch activity uses (hub/sessions.ts). */
export interface StepSender {
  sendStep(
    sid: string,
    step: {
      applyId: string;
      stepIndex: number;
      module: string;
      params: Record<string, unknown>;
      /** Check mode (plans): nothing is changed; `showContent` allows a unified diff of a file's content. */
      dryRun?: boolean;
      showContent?: boolean;
      /** A module shipped with the service: its program, which the soul caches by hash. */
      program?: StepProgram;
      /** Values the soul scrubs from the output and diff before its ledger keeps them (host-boundary.ts). */
      redact?: SecretValue[];
      /** The text the soul keeps and answers instead of the output (host-boundary.ts). */
      withhold?: string;
    },
    opts: { timeoutMs: number; signal?: AbortSignal; onProgress?: (message: string) => void },
  ): Promise<{
    changed: boolean;
    ok: boolean;
    output: string;
    startedAt: Date;
    finishedAt: Date;
    replayed: boolean;
    diff?: Record<string, unknown>;
    /** The files the step read and wrote, by identity: read by host-boundary.ts, never stored or shown. */
    files?: FileIdentityMsg[];
  }>;
  isConnected(sid: string): boolean;
}

/**
 * The transport seam for hosts without a stream (push mode over SSH, hub/ssh): the dispatch activity
 * asks which SIDs it owns, opens each such host once per dispatch and sends its steps through the
 * channel exactly as through the agent stream. An `open` that throws leaves the host `unknown`
 * with the error's message as the reason, and nothing was run there.
 */
export interface PushTransport {
  owns(sids: string[]): Promise<Set<string>>;
  open(sid: string, signal: AbortSignal): Promise<StepSender & { close(): Promise<void> }>;
}
