import type { Rule } from './types';

export const sl030: Rule = {
  id: 'SL030',
  name: 'module-contract',
  description:
    "A module shipped with the service (`modules/<module>/module.yml`) is broken: the contract's shape, a params schema that does not compile, or a program that is missing, too large, not executable or without `#!`.",
  help: 'Fix the contract or the program; see docs/state-modules.md, "modules shipped with a service".',
};
