import type { Rule } from './types';

export const sl010: Rule = {
  id: 'SL010',
  name: 'module-params',
  description: "A task's params have an unknown, missing or invalid parameter for its module.",
  help: "Use the module's parameters as documented.",
};
