import type { Rule } from './types';

export const sl031: Rule = {
  id: 'SL031',
  name: 'failure-budget',
  description:
    'A failure budget that cannot apply: `max_failed_unknown:` without `max_failed:`, or `max_failed:` in the `destroy` scenario (a destroy has no budget).',
  help: 'See docs/runs.md "Failure budget".',
};
