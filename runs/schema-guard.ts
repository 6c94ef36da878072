// New code never runs on old state, old code never on migrated state (issue 17 item 1): a run
// whose service commit expects another state_schema_version than the incarnation's committed state
// is refused with the way out. The API checks this before a run starts (400); render checks it
// again, because the API's check and the run are two moments.
export function schemaMismatch(
  inc: { name: string; state_schema_version: number | null },
  version: string,
  loaded: { commit: string; stateSchemaVersion: number },
): string | undefined {
  if (inc.state_schema_version === null || inc.state_schema_version === loaded.stateSchemaVersion) return undefined;
  const way =
    loaded.stateSchemaVersion > inc.state_schema_version
      ? `upgrade it first: POST /v1/incarnations/${inc.name}/upgrade {"version": "${version}"}`
      : 'state migrations are forward only: run it with a version whose state_schema_version matches its state';
  return (
    `incarnation ${inc.name}'s committed state is at state_schema_version ${inc.state_schema_version}, ` +
    `but version ${version} (commit ${loaded.commit.slice(0, 12)}) expects ${loaded.stateSchemaVersion}: ${way}`
  );
}
