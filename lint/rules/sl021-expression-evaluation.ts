import type { Rule } from './types';

export const sl021: Rule = {
  id: 'SL021',
  name: 'expression-evaluation',
  description: 'An expression failed while evaluating (render time), for example a missing key in host facts.',
  help: 'Guard the read with has(...) or fix the data.',
};
