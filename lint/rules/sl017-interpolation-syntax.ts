import type { Rule } from './types';

export const sl017: Rule = {
  id: 'SL017',
  name: 'interpolation-syntax',
  description: 'A `${` is not closed or is empty.',
  help: 'Close the expression with `}`; write `$${` for a literal `${`.',
};
