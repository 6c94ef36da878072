import type { ModuleSpec } from './types';
import { ABS_PATH } from './core-file-present';

/** A user or group name as useradd/groupadd accept it (never an option, never a number). */
export const ACCOUNT_NAME = {
  type: 'string',
  minLength: 1,
  maxLength: 32,
  pattern: '^[a-z_][a-z0-9_-]*\\$?$',
} as const;
const ID = { type: 'integer', minimum: 0, maximum: 4294967294 } as const;

/** A local user account exists with these properties (the ones written; others are left alone). */
export const coreUserPresent: ModuleSpec = {
  name: 'core.user.present',
  description: 'a local user account exists',
  params: {
    type: 'object',
    additionalProperties: false,
    required: ['name'],
    properties: {
      name: ACCOUNT_NAME,
      uid: ID,
      // The primary group: a name or a gid; it must exist (core.group.present first).
      group: { type: 'string', minLength: 1, maxLength: 32, pattern: '^([a-z_][a-z0-9_-]*\\$?|[0-9]+)$' },
      // Exactly these supplementary groups.
      groups: { type: 'array', maxItems: 64, items: ACCOUNT_NAME },
      home: ABS_PATH,
      shell: ABS_PATH,
      comment: { type: 'string', maxLength: 256, pattern: '^[^:\\n]*$' },
      system: { type: 'boolean' },
      create_home: { type: 'boolean' },
    },
  },
};

export const coreUserAbsent: ModuleSpec = {
  name: 'core.user.absent',
  description: 'a local user account does not exist',
  params: {
    type: 'object',
    additionalProperties: false,
    required: ['name'],
    properties: { name: ACCOUNT_NAME, remove_home: { type: 'boolean' } },
  },
};

export const coreGroupPresent: ModuleSpec = {
  name: 'core.group.present',
  description: 'a local group exists',
  params: {
    type: 'object',
    additionalProperties: false,
    required: ['name'],
    properties: { name: ACCOUNT_NAME, gid: ID, system: { type: 'boolean' } },
  },
};

export const coreGroupAbsent: ModuleSpec = {
  name: 'core.group.absent',
  description: 'a local group does not exist',
  params: { type: 'object', additionalProperties: false, required: ['name'], properties: { name: ACCOUNT_NAME } },
};
