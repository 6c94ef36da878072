import type { Rule } from './types';

export const sl013: Rule = {
  id: 'SL013',
  name: 'template-parse',
  description: 'A .tmpl template does not parse, or calls a function that is not in the safe function set.',
  help: 'Fix the template; see the function list in docs/scenario.md.',
};
