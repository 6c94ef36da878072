import type { Rule } from './types';

export const sl007: Rule = {
  id: 'SL007',
  name: 'scenario-schema',
  description:
    'A scenario file has an unknown key, a missing key, a value of the wrong shape, an invalid host selector, or an input schema that cannot hold (a keyword on the wrong type, a pattern that does not compile).',
  help: 'Follow the scenario format in docs/scenario.md.',
};
