import type { Rule } from './types';

export const sl001: Rule = {
  id: 'SL001',
  name: 'yaml-syntax',
  description:
    'A YAML file does not parse, holds several documents, duplicate keys, unsupported tags, or aliases beyond the limits (anchors bomb).',
  help: 'Fix the YAML at the reported position.',
};
