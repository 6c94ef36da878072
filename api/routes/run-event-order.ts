// The order of a run's Server-Sent Events, derived from what the run recorded rather than from the
// head's value at the moment of a poll. The stream looks every 150 ms; a run can clear its gate,
// finish the next batch and end between two looks, and the head then says only `succeeded`. What
// was recorded still tells the story: a wait after batch N ended before any host of a later batch
// finished, and before the end; a run with rendered hosts passed through rendering and dispatching;
// a run that succeeded committed. So each look turns the head and the host outcomes numbered since
// the last one into the events a client would have seen had it looked at every moment.
import type { HostEvent, RunHead } from '../../db/repos/run-events';

export interface RunEvent {
  event: 'phase' | 'render' | 'waiting' | 'batch' | 'host' | 'end';
  data: unknown;
  /** The host event's number, for Last-Event-ID; only `host` events carry one. */
  id?: number;
}

type Waiting = NonNullable<RunHead['waiting']>;

/** The phases a run passes through, in order; `done` is told by the `end` event. */
const PHASES = ['queued', 'rendering', 'dispatching', 'committing'] as const;
type StreamPhase = (typeof PHASES)[number];

export class RunEventOrder {
  private phase = -1;
  private rendered = false;
  private readonly batches = new Set<number>();
  private waiting: Waiting | null = null;
  private ended = false;

  /**
   * The events one look adds. `head` must be read before `events` (as the stream does): once the
   * head says the run ended, every host outcome was committed before it, so `events` are all.
   */
  look(head: RunHead, events: HostEvent[]): RunEvent[] {
    if (this.ended) return [];
    const out: RunEvent[] = [];
    const running = head.status === 'running';
    // Phases up to dispatching come before host outcomes; committing comes after the last of them.
    const reached = running ? head.phase : this.provenPhase(head, events);
    this.phasesUpTo(reached === 'committing' ? 'dispatching' : reached, out);
    if (!this.rendered && head.hosts > 0 && this.phase >= PHASES.indexOf('dispatching')) {
      this.rendered = true;
      out.push({ event: 'render', data: { hosts: head.hosts } });
    }
    for (const e of events) {
      // A host of a later batch finished: the wait after an earlier batch had ended by then.
      if (this.waiting && e.batch !== null && e.batch > this.waiting.batch) this.endWait(out);
      if (e.batch !== null && !this.batches.has(e.batch)) {
        this.batches.add(e.batch);
        out.push({ event: 'batch', data: { batch: e.batch } });
      }
      out.push({
        event: 'host',
        id: e.seq,
        data: {
          sid: e.sid,
          status: e.status,
          reason: e.reason,
          batch: e.batch,
          steps: e.steps,
          changed: e.changed,
          failed: e.failed,
        },
      });
    }
    if (running) {
      const now = head.waiting ?? null;
      if (!sameWait(now, this.waiting)) {
        // A new wait after a later batch: the earlier one ended first (its batch's successor ran).
        if (this.waiting) this.endWait(out);
        if (now) {
          this.waiting = now;
          out.push({ event: 'waiting', data: { waiting: now } });
        }
      }
      if (reached === 'committing') this.phasesUpTo('committing', out);
      return out;
    }
    if (this.waiting) this.endWait(out);
    if (reached === 'committing') this.phasesUpTo('committing', out);
    this.ended = true;
    out.push({
      event: 'end',
      data: { status: head.status, error: head.error, summary: head.summary, finished_at: head.finished_at },
    });
    return out;
  }

  /** Whether the `end` event was given: the stream closes after it. */
  get done(): boolean {
    return this.ended;
  }

  private endWait(out: RunEvent[]): void {
    this.waiting = null;
    out.push({ event: 'waiting', data: { waiting: null } });
  }

  /**
   * Sends each phase not yet sent, in order, up to `to`; a phase skipped between two looks is still
   * told. `done` is not a phase of the stream (the `end` event tells it), so it adds nothing.
   */
  private phasesUpTo(to: RunHead['phase'], out: RunEvent[]): void {
    const target = PHASES.indexOf(to as StreamPhase);
    while (this.phase < target) {
      this.phase += 1;
      out.push({ event: 'phase', data: { phase: PHASES[this.phase] } });
    }
  }

  /**
   * The last phase an ended run is known to have passed: rendered hosts mean rendering and
   * dispatching happened (render records them as it enters dispatching), a success means the
   * commit ran. A run that failed before rendering proves only that it was queued and rendering.
   */
  private provenPhase(head: RunHead, events: HostEvent[]): RunHead['phase'] {
    if (head.status === 'succeeded' && (head.hosts > 0 || this.batches.size > 0)) return 'committing';
    if (head.hosts > 0 || events.length > 0) return 'dispatching';
    // Nothing recorded proves a later phase: tell none beyond what was already told.
    return this.phase >= 0 ? (PHASES[this.phase] as RunHead['phase']) : 'done';
  }
}

function sameWait(a: Waiting | null, b: Waiting | null): boolean {
  if (a === null || b === null) return a === b;
  return a.for === b.for && a.batch === b.batch && a.since === b.since && (a.health ?? null) === (b.health ?? null);
}
