// Who made a run or a plan, as every run and plan answer shows it (docs/api.md "Activity"):
// `created_by` is what PostgreSQL holds (an operator's AID, `keeper:<kid>` for the converger,
// `keeper:drift-check`), `started_by` says which of the three it is. Runs recorded before
// created_by was kept show null for both.
import { actorKindOf, type ActorKind } from '../db/repos/activity';

export function attribution(r: { created_by: string | null }): {
  created_by: string | null;
  started_by: ActorKind | null;
} {
  return { created_by: r.created_by, started_by: actorKindOf(r.created_by) };
}
