/**
 * Public API of the scenario library: load a service (git or directory),
 * render it to per-host plans, evaluate expressions, lint, migrate state,
 * and the module registry. Pure library: it imports nothing from the
 * server side (api, hub, db, temporal, workflows, activities, keeper).
 */
export type { RenderError, Position } from './errors';
export { formatError } from './errors';
export type { LoadedService, Scenario, Task, TemplateFile, Migration, InputDecl } from './model';
export { loadServiceFromDir, ServiceDirError } from './load/dir';
export { loadServiceFromGit, resolveRef, GitLoadError, type GitSource } from './load/git';
export { render, type RenderRequest, type RenderResult } from './render/render';
export type { RenderPlan, HostPlan, PlanStep, RenderHost } from './render/plan';
export { evaluateExpression, ExpressionError, type ExpressionContext } from './cel/evaluate';
export { lintService, type Finding } from './lint-service';
export { checkRunInput, type RunInputCheck } from './check/run-input';
export { applyMigrations, type MigrationResult } from './migrations';
export { MODULES, checkModuleParams, type ModuleSpec, type ParamProblem } from './modules';
export { compileTemplate, runTemplate, TEMPLATE_FUNCS } from './template';
export { LIMITS } from './limits';
export { renderWithSecrets, type RenderSecrets } from './secrets/render';
export { SECRET_MARK, splitHandles } from './secrets/markers';
export { deriveHandleKey, signHandle, verifyHandle } from './secrets/handles';
export type { StepSecret } from './render/plan';
