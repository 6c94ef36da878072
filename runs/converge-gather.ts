// The converger's gathering window (issue 30: "new hosts in one run"). Hosts rarely come back at
// the same instant: two souls restarted together connect a few hundred milliseconds apart, and a
// look once a second catches the first alone, so without a window the pair converged in two runs
// (and 100 hosts returning over ten seconds in ten). While more hosts are on their way (pending
// hosts of the incarnation, or new souls of its covens, not connected yet: db/repos/convergence.ts
// hostsOnTheWay), an incarnation's targets are held until none has joined them for GATHER_QUIET_MS,
// and never longer than GATHER_MAX_MS after the first was seen, so a steady trickle still gets runs
// and a host that never comes back delays the others by the quiet time only. When none is on its
// way the run starts at once: a lone new host does not wait.
//
// The window lives in the keeper that looks, not in the database: every keeper gathers on its own,
// and the first whose window closes takes the incarnation's lock; the others find the run.

/** A converge run starts once no further host has joined its targets for this long. */
export const GATHER_QUIET_MS = 2000;
/** ... and at the latest this long after the first of them was seen. */
export const GATHER_MAX_MS = 10_000;

interface Window {
  first: number;
  last: number;
  sids: Set<string>;
}

export class Gathering {
  private readonly windows = new Map<string, Window>();

  constructor(
    private readonly quietMs = GATHER_QUIET_MS,
    private readonly maxMs = GATHER_MAX_MS,
  ) {}

  /**
   * True when the incarnation's run may start with these targets now (`onTheWay`: how many more
   * hosts may join soon); false: look again later.
   */
  ready(incarnation: string, targets: readonly string[], onTheWay: number, now: number): boolean {
    if (onTheWay === 0) return true;
    const w = this.windows.get(incarnation);
    if (!w) {
      this.windows.set(incarnation, { first: now, last: now, sids: new Set(targets) });
      return this.quietMs <= 0;
    }
    for (const sid of targets)
      if (!w.sids.has(sid)) {
        w.sids.add(sid);
        w.last = now;
      }
    return now - w.last >= this.quietMs || now - w.first >= this.maxMs;
  }

  /**
   * Ends every window but those still gathering after this pass: an incarnation whose run started,
   * or whose hosts converged elsewhere or left, opens a new window with its next arrival.
   */
  keepOnly(incarnations: ReadonlySet<string>): void {
    for (const name of this.windows.keys()) if (!incarnations.has(name)) this.windows.delete(name);
  }
}
