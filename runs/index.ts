// The runs capability's face (docs/architecture.md, ARCHITECTURE.md section 5): the one module
// api/ and mcp/ import from runs/, so what lies behind it (workflows, activities, the start saga)
// can move without touching the edges. Only what an edge calls is listed here; nothing inside
// runs/ imports this file, so it closes no import loop.

// Runs and plans: the run service (the one place a run begins) and what it answers.
export { Refusal, TEMPORAL_UNAVAILABLE } from './start/outcome';
export type { FieldProblem, RefusalKind, RunAccepted, RunOutcome, RunRefused } from './start/outcome';
export type { RunService } from './start/service';

// One-off executions: their front door and its refusal.
export { ExecutionRefused, startExecution } from './executions';
export type { ExecutionRequest } from './executions';

// Fact queries on souls (`where`, `at`), shared by the soul list and the executions' selection.
export { QueryError, factAt, factsAt, selectSouls } from './soul-query';

// Scheduled drift checks: the Temporal Schedule an incarnation's drift-check setting makes.
export { setDriftSchedule } from './drift-schedule';
export type { TemporalClientHolder } from './connection';
