import type { Rule } from './types';

export const sl002: Rule = {
  id: 'SL002',
  name: 'repository-limits',
  description:
    'A file is outside the repository (a `..` path or a symlink leaving it), too large, or the repository exceeds its size or file-count limits.',
  help: 'Keep every file inside the repository and within the documented limits.',
};
