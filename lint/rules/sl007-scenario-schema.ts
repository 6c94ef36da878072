import type { Rule } from './types';

export const sl007: Rule = {
  id: 'SL007',
  name: 'scenario-schema',
  description: 'A scenario file has an unknown key, a missing key, a value of the wrong shape, or an invalid host selector.',
  help: 'Follow the scenario format in docs/scenario.md.',
};
