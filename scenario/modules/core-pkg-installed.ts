import type { ModuleSpec } from './types';

/** A package is installed (apt, dnf, ... chosen on the host by its facts). */
export const corePkgInstalled: ModuleSpec = {
  name: 'core.pkg.installed',
  description: 'a package is installed',
  params: {
    type: 'object',
    additionalProperties: false,
    required: ['name'],
    properties: {
      name: { type: 'string', minLength: 1, pattern: '^[A-Za-z0-9][A-Za-z0-9+._:-]*$' },
      // A package manager version string (apt: [epoch:]upstream[-revision]); never an option.
      version: { type: 'string', minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9][A-Za-z0-9+.~_:-]*$' },
    },
  },
};
