import type { Rule } from './types';

export const sl012: Rule = {
  id: 'SL012',
  name: 'undeclared-name',
  description:
    'An expression reads a name that is not declared here: an undeclared input, a bare `soulprint.<path>`, or a registered result where it is not available.',
  help: 'Declare the input, write soulprint.self.<path>, or move the expression to a key evaluated after the registering task.',
};
