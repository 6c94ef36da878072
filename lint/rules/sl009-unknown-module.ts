import type { Rule } from './types';

export const sl009: Rule = {
  id: 'SL009',
  name: 'unknown-module',
  description: 'A task names a module that is not in the registry.',
  help: 'Use a module of the core library (docs/state-modules.md lists them).',
};
