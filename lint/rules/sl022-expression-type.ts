import type { Rule } from './types';

export const sl022: Rule = {
  id: 'SL022',
  name: 'expression-type',
  description:
    'An expression has the wrong type, for example a `when:` that is not a boolean or a `loop:` that is not a list; also a loop over too many items.',
  help: 'Make the expression produce the expected type.',
};
