import type { Rule } from './types';

export const sl020: Rule = {
  id: 'SL020',
  name: 'run-input',
  description:
    "The run's input does not match the scenario (render time): unknown, missing or wrongly typed input, or an unknown operation.",
  help: 'Pass the declared inputs with their types.',
};
