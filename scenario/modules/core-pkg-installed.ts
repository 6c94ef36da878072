import type { ModuleSpec } from './types';

/** A package name; never an option. */
export const PKG_NAME = { type: 'string', minLength: 1, pattern: '^[A-Za-z0-9][A-Za-z0-9+._:-]*$' } as const;
/** One name, or a list of names applied in one package-manager call. */
const NAMES = {
  type: ['string', 'array'],
  minLength: 1,
  pattern: PKG_NAME.pattern,
  minItems: 1,
  maxItems: 256,
  items: PKG_NAME,
} as const;

/** Packages are installed (apt, dnf, ... chosen on the host by its facts), all in one call. */
export const corePkgInstalled: ModuleSpec = {
  name: 'core.pkg.installed',
  description: 'a package (or a list of packages) is installed',
  params: {
    type: 'object',
    additionalProperties: false,
    required: ['name'],
    properties: {
      name: NAMES,
      // A package manager version string (apt: [epoch:]upstream[-revision]); never an option. One name only.
      version: { type: 'string', minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9][A-Za-z0-9+.~_:-]*$' },
    },
  },
};

/** Packages are not installed; `purge` (default true) removes their configuration files too. */
export const corePkgRemoved: ModuleSpec = {
  name: 'core.pkg.removed',
  description: 'a package (or a list of packages) is not installed',
  params: {
    type: 'object',
    additionalProperties: false,
    required: ['name'],
    properties: { name: NAMES, purge: { type: 'boolean' } },
  },
};
