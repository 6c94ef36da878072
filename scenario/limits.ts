/**
 * Fixed limits that bound the work a service repository can cause. A
 * malicious or broken repository hits one of these and gets an error; it can
 * never make the keeper read outside the repository, allocate without bound
 * or loop forever. docs/scenario.md lists them.
 */
export const LIMITS = {
  /** Largest single file read from a service repository. */
  maxFileBytes: 1024 * 1024,
  /** Sum of all files read from one repository (templates, scenarios, migrations). */
  maxRepoBytes: 16 * 1024 * 1024,
  /** Number of files considered in one repository. */
  maxFiles: 2000,
  /** Nesting depth of YAML collections. */
  maxYamlDepth: 64,
  /** Alias (`*ref`) uses per YAML document. */
  maxYamlAliases: 100,
  /** Nodes produced when aliases are expanded into values (anchors bomb). */
  maxYamlNodes: 100_000,
  /** Length of one CEL expression source. */
  maxExpressionLength: 4096,
  /**
   * Cost of one CEL evaluation: a unit per node evaluated (each comprehension iteration counts its
   * step) plus the size of each list, map or string a concatenation or call builds.
   */
  maxExpressionCost: 500_000,
  /** Wall-clock budget for one CEL evaluation, a backstop to the cost budget. */
  maxExpressionMillis: 1000,
  /** Length of the pattern of one CEL `matches` (an RE2 regular expression). */
  maxRegexPatternLength: 1024,
  /** Instructions one `matches` pattern compiles to (a counted repetition copies its operand). */
  maxRegexProgramSize: 5000,
  /**
   * Length of the string one CEL `matches` searches; each search also costs its length times the
   * pattern's size (divided by 32) of the expression's cost budget.
   */
  maxRegexSubjectLength: 64 * 1024,
  /**
   * Wall-clock deadline for evaluating a fact query's or an execution target's `where` over every
   * soul it reads, checked between souls (each evaluation is bounded by its own budget).
   */
  maxQueryMillis: 5000,
  /** Nested {{template}} calls (recursion). */
  maxTemplateDepth: 32,
  /** Actions executed by one template render (a step budget, deterministic unlike a clock). */
  maxTemplateSteps: 200_000,
  /** Wall-clock budget for one template render, a backstop to the step budget. */
  maxTemplateMillis: 2000,
  /** Output of one template render. */
  maxTemplateOutputBytes: 1024 * 1024,
  /** Tasks in one scenario. */
  maxTasks: 500,
  /** Items of one task's `loop:` on one host. */
  maxLoopItems: 1000,
  /** Steps of one host's plan, every loop item counted. */
  maxStepsPerHost: 2000,
  /** One module program shipped with a service (modules/<module>/): it travels with every step using it. */
  maxModuleProgramBytes: 256 * 1024,
  /** Modules shipped with one service. */
  maxServiceModules: 50,
} as const;
