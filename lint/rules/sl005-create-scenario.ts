import type { Rule } from './types';

export const sl005: Rule = {
  id: 'SL005',
  name: 'create-scenario',
  description: 'scenario/create/main.yml is missing; it runs when an incarnation is created.',
  help: 'Add scenario/create/main.yml.',
};
