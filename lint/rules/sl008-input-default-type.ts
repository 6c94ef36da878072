import type { Rule } from './types';

export const sl008: Rule = {
  id: 'SL008',
  name: 'input-default-type',
  description:
    "An input's default does not match its declared type, or breaks its schema (items, properties, required, enum, minimum, maximum, pattern).",
  help: 'Change the default or the type.',
};
