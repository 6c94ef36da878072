import type { Rule } from './types';

export const sl033: Rule = {
  id: 'SL033',
  name: 'unguarded-command',
  description:
    'A warning: a `core.cmd.run` task with no guard (`creates`, `removes`, `unless`, `onlyif`, `onchanges` or `when`) runs, and reports a change, on every run, where steps should be idempotent; its plan says "runs every time (no guard)".',
  help: 'Add the guard that says when the command is done (docs/state-modules.md "core.cmd.run"), or suppress with a reason when repeating it is harmless.',
};
