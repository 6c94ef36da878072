// Why a step sent through the hub has no result. Callers (the dispatch activities) must treat every
// one of these as "unknown" for the host, never as success (ARCHITECTURE 2). `delivered` says
// whether the soul may have received the step: when false, sending it again elsewhere is safe;
// when true, a resend is still safe because the soul's ledger answers a redelivered step with its
// recorded result.
export abstract class DispatchError extends Error {
  abstract readonly code: 'soul_not_connected' | 'step_timeout' | 'step_interrupted' | 'step_cancelled';
  abstract readonly delivered: boolean;
  constructor(
    readonly sid: string,
    message: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** This keeper holds no live session for the SID; the step was not sent. */
export class SoulNotConnected extends DispatchError {
  readonly code = 'soul_not_connected' as const;
  readonly delivered = false;
  constructor(sid: string) {
    super(sid, `soul ${sid} has no live stream on this keeper`);
  }
}

/** The step was sent and no result came within the timeout; a cancel was sent to the soul. */
export class StepTimeout extends DispatchError {
  readonly code = 'step_timeout' as const;
  readonly delivered = true;
  constructor(
    sid: string,
    readonly requestId: string,
    timeoutMs: number,
  ) {
    super(sid, `soul ${sid} sent no result for step request ${requestId} within ${timeoutMs} ms`);
  }
}

/** The step was sent and the stream ended (soul gone, superseded, keeper stopping) before its result. */
export class StepInterrupted extends DispatchError {
  readonly code = 'step_interrupted' as const;
  readonly delivered = true;
  constructor(
    sid: string,
    readonly requestId: string,
    reason: string,
  ) {
    super(sid, `the stream of soul ${sid} ended before the result of step request ${requestId}: ${reason}`);
  }
}

/** The caller aborted (its AbortSignal); a cancel was sent to the soul. */
export class StepCancelled extends DispatchError {
  readonly code = 'step_cancelled' as const;
  readonly delivered = true;
  constructor(
    sid: string,
    readonly requestId: string,
  ) {
    super(sid, `step request ${requestId} to soul ${sid} was cancelled`);
  }
}
