import type { Rule } from './types';

export const sl003: Rule = {
  id: 'SL003',
  name: 'service-manifest',
  description: 'service.yml is missing or does not match its schema (`name`, `state_schema_version`).',
  help: 'Give service.yml a `name` and an integer `state_schema_version` of 1 or more.',
};
