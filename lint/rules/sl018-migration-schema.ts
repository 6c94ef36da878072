import type { Rule } from './types';

export const sl018: Rule = {
  id: 'SL018',
  name: 'migration-schema',
  description: 'A migration file does not match its schema or a migration cannot be applied.',
  help: 'Give each migration `state_changes` (`sets`, `unsets`, `moves`), each key touched once.',
};
