import type { Rule } from './types';

export const sl015: Rule = {
  id: 'SL015',
  name: 'template-reference',
  description: 'A core.file.rendered task names a template that does not exist or lies outside templates/.',
  help: 'Name a file under templates/.',
};
