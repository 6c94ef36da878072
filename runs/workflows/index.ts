// The workflows the shared-queue worker registers (its bundle entry point). Deterministic code only.
export { incarnationRun, dispatchShard, runProgressQuery } from './run';
export { approveSignal } from './gate';
export { incarnationUpgrade } from './upgrade';
export { incarnationPlan } from './plan';
export { incarnationDriftCheck } from './drift';
export { oneOffExecution } from './execution';
export { keeperRetention } from './retention';
