import type { Rule } from './types';

export const sl011: Rule = {
  id: 'SL011',
  name: 'cel-syntax',
  description: 'An expression is not valid CEL.',
  help: 'Fix the expression syntax.',
};
