// The run activities, from dependency factories (STYLE: createActivities(deps)). The shared-queue
// worker registers the shared set; each keeper's own-queue worker registers only dispatch.
export { createSharedActivities, type SharedActivities } from './shared';
export { createDispatchActivities, type DispatchActivities } from './dispatch';
export type { SharedActivityDeps, DispatchActivityDeps, StepSender, LocateSouls } from './deps';
export type { ScenarioPort, LoadedService, RenderedPlan, RenderResult, RenderError } from './scenario-port';
export { presenceLocator } from './presence-lookup';
export { createExecutionDispatchActivities, createExecutionSharedActivities } from './execute';
