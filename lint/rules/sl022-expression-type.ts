import type { Rule } from './types';

export const sl022: Rule = {
  id: 'SL022',
  name: 'expression-type',
  description: 'An expression has the wrong type, for example a `when:` that is not a boolean.',
  help: 'Make the expression produce the expected type.',
};
