// Public entry point of the soul's state machinery. The soul's event-stream handler needs only:
//
//   const ledger = await Ledger.open(ledgerDir);              // once per soul process
//   const registry = createStateRegistry({ facts, runner: createProcessRunner() });
//   const outcome = await applyStep({ applyId, host, index, module, params }, { registry, ledger });
//
// applyStep never rejects; see agent/apply/apply-step.ts for the full contract and
// docs/state-modules.md for the modules, the ledger format and how to extend either registry.
export { applyStep } from '../apply/apply-step';
export type { ApplyStepDeps, Clock, StepLedger, StepOutcome, StepToApply } from '../apply/apply-step';
export { Ledger } from '../ledger/ledger';
export type { LedgerEntry, LedgerOptions, LedgerRecord } from '../ledger/ledger';
export { LedgerLockedError } from '../ledger/dir-lock';
export { APPLY_ID_PATTERN, InvalidStepKeyError } from '../ledger/keys';
export { createStateRegistry, STATE_MODULES } from './registry';
export type { StateRegistry } from './registry';
export { defineState } from './shape';
export type { Change, StateSpec } from './shape';
export type {
  AccountFiles,
  HostFacts,
  StateContext,
  StateDeps,
  StateModule,
  StateModuleFactory,
  StepDiff,
  ModuleResult,
} from './types';
export { createProcessRunner } from '../exec/runner';
export type { Command, CommandResult, CommandRunner } from '../exec/runner';
export { PACKAGE_PLATFORMS, NoPlatformError, selectPackageManager } from '../exec/registry';
export type { PackageManager, PackagePlatform, PackageState } from '../exec/types';
