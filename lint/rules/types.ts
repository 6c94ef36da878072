/**
 * A soul-lint rule: its id, a short name, what it checks and how to fix a
 * finding. The detection lives in scenario/ (load and check), shared with
 * render, so a service that lints clean and a render agree; this registry
 * gives each id its documentation for the text, JSON and SARIF outputs.
 */
export interface Rule {
  id: string;
  name: string;
  description: string;
  help: string;
}
