/**
 * A state module as the scenario language sees it: its name and the JSON
 * schema of its parameters. The soul (agent/) imports the same registry, so
 * a parameter accepted at render time is one the soul understands.
 */
export interface ModuleSpec {
  name: string;
  description: string;
  /** JSON schema (draft-07, checked with ajv) of the fully resolved `params`. */
  params: Record<string, unknown>;
}
