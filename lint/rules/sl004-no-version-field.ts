import type { Rule } from './types';

export const sl004: Rule = {
  id: 'SL004',
  name: 'no-version-field',
  description: "service.yml has a `version` field; a service's version is its git ref.",
  help: 'Remove `version` and tag or branch the repository.',
};
