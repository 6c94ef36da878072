// Fact queries and host selection (issue 34): which souls match a CEL `where` over
// `soulprint.self`, answered from the soulprints the registry already holds; no host is contacted.
// The same expression language, checker and evaluation budget as a scenario's `where:` (scenario/cel),
// and the same view of a host: its stored facts plus its covens, as render gives them.
// One-off executions select their hosts through `selectSouls` too, so a query previews exactly the
// hosts an execution with the same target would reach.
import type { Knex } from 'knex';
import { listSouls, type SoulRecord } from '../db/repos/souls';
import { compileExpression, type Program } from '../scenario/cel/program';
import { ExpressionError } from '../scenario/cel/evaluate';
import { toCel } from '../scenario/cel/values';
import { LIMITS } from '../scenario/limits';

/** A bad `where` (syntax, unknown name, type, or a non-boolean answer): the caller names the field. */
export class QueryError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = 'QueryError';
  }
}

const SCOPE = { inputs: new Map(), soulprint: true, state: false, registered: [], result: false };
const SCAN_PAGE = 1000;

/** What `soulprint.self` holds for a soul: its facts as last reported, and its covens. */
export function selfOf(s: SoulRecord): Record<string, unknown> {
  return { ...(s.soulprint ?? {}), covens: s.covens };
}

/** When the stored facts were last reported: the stream's last contact (agent) or the last SSH contact. */
export function factsAt(s: SoulRecord): Date | null {
  if (s.soulprint === null) return null;
  return s.transport === 'ssh' ? s.last_contact_at : s.last_seen_at;
}

/** A compiled `where`: does this soul match, evaluated within `maxMillis` (LIMITS by default). */
export type WhereMatch = (s: SoulRecord, maxMillis?: number) => boolean;

/** Compiles `where` once; throws QueryError naming `field` for anything the checker refuses. */
export function compileWhere(src: string, field = 'where'): WhereMatch {
  let program: Program;
  try {
    program = compileExpression(src, SCOPE);
  } catch (e) {
    if (e instanceof ExpressionError) throw new QueryError(field, `${e.message} (at offset ${e.offset})`);
    throw e;
  }
  return (s, maxMillis) => {
    let v: unknown;
    try {
      v = program({ input: {}, soulprint: toCel({ self: selfOf(s) }) }, maxMillis === undefined ? {} : { maxMillis });
    } catch (e) {
      // A fact this host lacks (no soulprint yet, or a missing key) does not match; a refused
      // expression (a spent budget, a `matches` pattern that is not RE2 or over a limit) is the
      // expression's fault, so it is the caller's error.
      if (e instanceof ExpressionError && e.refused) throw new QueryError(field, e.message);
      if (e instanceof ExpressionError) return false;
      throw e;
    }
    if (typeof v !== 'boolean')
      throw new QueryError(field, `must be a boolean expression (it gave ${Array.isArray(v) ? 'a list' : typeof v})`);
    return v;
  };
}

// How long `where` may hold the keeper's thread before the scan lets other requests (`/readyz`, the
// soul streams' leases) run.
const YIELD_AFTER_MS = 20;

/**
 * The time a query's `where` evaluations take together, held to LIMITS.maxQueryMillis. Every
 * evaluation is bounded by its own budget (cost, and a clock checked between nodes); over thousands
 * of souls they add up, so the scan checks the total between souls and gives each evaluation at
 * most what is left. The deadline is on evaluation time, not on the database's paging.
 */
export class QueryClock {
  private spent = 0;
  private sinceYield = 0;
  evaluated = 0;
  constructor(
    private readonly match: WhereMatch,
    private readonly field: string,
    private readonly deadlineMs: number = LIMITS.maxQueryMillis,
  ) {}

  private refuse(): never {
    throw new QueryError(
      this.field,
      `evaluating it exceeded the query deadline of ${this.deadlineMs} ms after ${this.evaluated} souls; narrow the selection (coven, sid) or simplify the expression`,
    );
  }

  async test(s: SoulRecord): Promise<boolean> {
    if (this.sinceYield >= YIELD_AFTER_MS) {
      this.sinceYield = 0;
      await new Promise((resolve) => setImmediate(resolve));
    }
    const left = this.deadlineMs - this.spent;
    if (left <= 0) this.refuse();
    const start = performance.now();
    try {
      return this.match(s, Math.min(LIMITS.maxExpressionMillis, left));
    } catch (e) {
      // A time budget cut short by the query's deadline is the deadline's refusal, not the expression's.
      if (e instanceof QueryError && this.spent + (performance.now() - start) >= this.deadlineMs) this.refuse();
      throw e;
    } finally {
      const took = performance.now() - start;
      this.spent += took;
      this.sinceYield += took;
      this.evaluated++;
    }
  }
}

/**
 * A dotted path into a soul's facts (`os_release`, `addresses.0`, `covens`); undefined when absent.
 * Only the facts' own keys are read: a path naming what every object inherits (`constructor`,
 * `__proto__`, `toString`) is absent, not a function that no answer can carry (a fuzzed
 * `count_by=constructor` was a 500).
 */
export function factAt(s: SoulRecord, path: string): unknown {
  let v: unknown = selfOf(s);
  for (const part of path.split('.')) {
    if (v === null || typeof v !== 'object' || !Object.hasOwn(v, part)) return undefined;
    v = (v as Record<string, unknown>)[part];
  }
  return v;
}

export interface SelectTarget {
  covens?: string[];
  sids?: string[];
  where?: string;
  status?: SoulRecord['status'] /** part of the SID */;
  sid?: string;
}

/**
 * Every soul matching the target, ordered by SID: in any of `covens` (when given), among `sids` (when
 * given), and matching `where`. Revoked souls are never selected. Reads the registry in pages.
 */
export async function selectSouls(
  db: Knex,
  target: SelectTarget,
  max = Number.POSITIVE_INFINITY,
): Promise<SoulRecord[]> {
  const clock =
    target.where === undefined ? null : new QueryClock(compileWhere(target.where, 'target.where'), 'target.where');
  const sids = target.sids && new Set(target.sids);
  const out: SoulRecord[] = [];
  const covens = target.covens && target.covens.length > 0 ? target.covens : [undefined];
  const seen = new Set<string>();
  for (const coven of covens) {
    let after: string | undefined;
    for (;;) {
      const page = await listSouls(db, { coven, status: target.status, sid: target.sid }, { limit: SCAN_PAGE, after });
      for (const s of page.items) {
        if (seen.has(s.sid) || s.status === 'revoked' || (sids && !sids.has(s.sid))) continue;
        if (clock !== null && !(await clock.test(s))) continue;
        seen.add(s.sid);
        out.push(s);
        if (out.length > max) return out.sort((a, b) => a.sid.localeCompare(b.sid));
      }
      if (!page.next) break;
      after = page.next;
    }
  }
  return out.sort((a, b) => a.sid.localeCompare(b.sid));
}
