import type { Rule } from './types';

export const sl014: Rule = {
  id: 'SL014',
  name: 'template-interpolation',
  description: 'A .tmpl template contains `${`, the scenario interpolation marker, which does not work in templates.',
  help: 'Use {{ .name }} and pass values through `vars`.',
};
