import type { Rule } from './types';

export const sl024: Rule = {
  id: 'SL024',
  name: 'secret-use',
  description:
    'A secret is used in a way that would expose or lose it: a `secret: true` input that is not a string or whose default is a value, a secret transformed by a function, or a secret mixed into committed state text.',
  help: 'Keep references (secretstore:<path>#<field>) in repositories and state; place a secret into text as it is (docs/secrets.md).',
};
