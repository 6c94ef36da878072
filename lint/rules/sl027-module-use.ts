import type { Rule } from './types';

export const sl027: Rule = {
  id: 'SL027',
  name: 'module-use',
  description:
    'A core module used in a way its schema cannot refuse: a restart or reload without a trigger, a shell command split in argv, a version for a list of packages, the removal of a system folder, a shell as `validate`.',
  help: 'See docs/state-modules.md for each module; restarted/reloaded go with `onchanges:`.',
};
