import type { Rule } from './types';

export const sl009: Rule = {
  id: 'SL009',
  name: 'unknown-module',
  description: 'A task names a module that is not in the registry.',
  help: 'Use core.pkg.installed, core.file.present or core.file.rendered.',
};
