import type { Rule } from './types';

export const sl026: Rule = {
  id: 'SL026',
  name: 'suppression-reason',
  description: 'An inline `# soul-lint: ignore SL0xx` comment without a reason: it suppresses nothing.',
  help: 'Say why the finding is fine after `--`: `# soul-lint: ignore SL025 -- the vars come from input`.',
};
