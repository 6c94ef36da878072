// The failure budget (`max_failed:`, docs/runs.md "Failure budget"): how many targeted hosts of one
// run may fail (and, unless `max_failed_unknown: false`, be unknown) before the rollout stops. A
// count ("2") or a percentage of the run's targeted hosts ("5%"). A run may exceed the budget by
// none: with 10 hosts and "5%", a single failed host (10%) stops it, as Ansible's
// max_fail_percentage does. Pure: render, the API's up-front check and soul-lint share it.

export type BudgetSpec = { kind: 'count'; n: number } | { kind: 'percent'; p: number };

const PERCENT = /^(100|[1-9]?[0-9])%$/;

/** The spec of a `max_failed` value, or a message saying what it must be. */
export function parseBudget(value: unknown): BudgetSpec | string {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0) return { kind: 'count', n: value };
  if (typeof value === 'string') {
    if (/^[0-9]{1,9}$/.test(value)) return { kind: 'count', n: Number(value) };
    const m = PERCENT.exec(value);
    if (m) return { kind: 'percent', p: Number(m[1]) };
  }
  return 'must be a host count (an integer >= 0) or a percentage of the targeted hosts ("5%", 0 to 100)';
}

/** The hosts the budget allows to fail among `hosts` targeted. */
export function budgetHosts(spec: BudgetSpec, hosts: number): number {
  return spec.kind === 'count' ? spec.n : Math.floor((hosts * spec.p) / 100);
}

/**
 * Whether an operator's budget is more than the scenario's. Counts compare with counts and
 * percentages with percentages; a count against a percentage is only known at render, where the
 * smaller of the two applies (so it is never over).
 */
export function overBudget(asked: BudgetSpec, allowed: BudgetSpec | undefined): boolean {
  if (!allowed) return asked.kind === 'count' ? asked.n > 0 : asked.p > 0;
  if (asked.kind === 'count' && allowed.kind === 'count') return asked.n > allowed.n;
  if (asked.kind === 'percent' && allowed.kind === 'percent') return asked.p > allowed.p;
  return false;
}

export function showBudget(spec: BudgetSpec | undefined): string {
  if (!spec) return '0 (the scenario sets no max_failed)';
  return spec.kind === 'count' ? String(spec.n) : `${spec.p}%`;
}
