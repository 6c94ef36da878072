import type { Rule } from './types';

export const sl019: Rule = {
  id: 'SL019',
  name: 'template-execution',
  description: 'A template failed while rendering (render time): a missing key, a wrong type, or a limit.',
  help: 'Pass the keys the template reads in `vars`.',
};
