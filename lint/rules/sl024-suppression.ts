import type { Rule } from './types';

export const sl024: Rule = {
  id: 'SL024',
  name: 'suppression-reason',
  description: 'An inline `# soul-lint: ignore SL0xx` comment without a reason: it suppresses nothing.',
  help: 'Say why the finding is fine after `--`: `# soul-lint: ignore SL023 -- the vars come from input`.',
};
