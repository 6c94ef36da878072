// Bounds on held connections: each operator may hold this many run event streams and long-poll
// waits at once on one keeper. A client that leaks connections gets 429 instead of exhausting the
// keeper's sockets for everybody.
import type { ApiDeps } from '../deps';
import { ApiProblem } from '../problems';

export const MAX_WATCHES_PER_OPERATOR = 8;

export class OperatorSlots {
  private readonly held = new Map<string, number>();

  constructor(readonly max: number) {}

  /** Takes a slot for `aid` or throws 429; the returned function gives it back (once). */
  acquire(aid: string): () => void {
    const n = this.held.get(aid) ?? 0;
    if (n >= this.max) {
      throw new ApiProblem(
        429,
        'too-many-watches',
        `operator ${aid} already holds ${n} run streams or waits on this keeper (the limit is ${this.max}); close one and retry`,
        { headers: { 'Retry-After': '5' } },
      );
    }
    this.held.set(aid, n + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.held.get(aid) ?? 1) - 1;
      if (left <= 0) this.held.delete(aid);
      else this.held.set(aid, left);
    };
  }

  count(aid: string): number {
    return this.held.get(aid) ?? 0;
  }
}

// One set of slots per keeper (per API deps), so keepers in one test process do not share them.
const slots = new WeakMap<ApiDeps, OperatorSlots>();
export function operatorSlots(deps: ApiDeps): OperatorSlots {
  let s = slots.get(deps);
  if (!s) slots.set(deps, (s = new OperatorSlots(MAX_WATCHES_PER_OPERATOR)));
  return s;
}
