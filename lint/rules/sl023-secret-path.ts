import type { Rule } from './types';

export const sl023: Rule = {
  id: 'SL023',
  name: 'secret-path',
  description:
    "A secretstore(...) call or a secret input reads a path outside the prefixes service.yml declares under `secrets:` (or the keeper's secretstore.scenario_prefix), or names its path with something other than string literals.",
  help: 'Read a path under a declared prefix, or add the prefix to service.yml `secrets:` so the repository shows what the service reads (docs/secrets.md).',
};
