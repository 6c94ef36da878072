import type { Rule } from './types';

export const sl016: Rule = {
  id: 'SL016',
  name: 'task-references',
  description:
    'Duplicate task names, requisites (`require`, `onchanges`) that do not name an earlier task, or invalid or duplicate `register` names.',
  help: 'Refer to earlier tasks by their unique names.',
};
