import type { Rule } from './types';

export const sl006: Rule = {
  id: 'SL006',
  name: 'migrations-present',
  description:
    'state_schema_version is above 1 but a migrations/<version>.yml file between 2 and that version is missing.',
  help: 'Add the missing migration file.',
};
