import type { ModuleSpec } from './types';
import { ABS_PATH, ACCOUNT, FILE_MODE } from './core-file-present';

/** A directory exists with this mode and ownership; its missing parents are made (0755, root) unless `parents: false`. */
export const coreDirPresent: ModuleSpec = {
  name: 'core.dir.present',
  description: 'a directory exists with the given mode and owner',
  params: {
    type: 'object',
    additionalProperties: false,
    required: ['path'],
    properties: { path: ABS_PATH, mode: FILE_MODE, owner: ACCOUNT, group: ACCOUNT, parents: { type: 'boolean' } },
  },
};

/** `path` is a symlink to `target`; what is there instead is replaced only with `force: true` (never a directory). */
export const coreLinkPresent: ModuleSpec = {
  name: 'core.link.present',
  description: 'a symbolic link points at the given target',
  params: {
    type: 'object',
    additionalProperties: false,
    required: ['path', 'target'],
    properties: {
      path: ABS_PATH,
      target: { type: 'string', minLength: 1, maxLength: 4096 },
      force: { type: 'boolean' },
    },
  },
};

/** Nothing is at `path` (a file or a symlink; a directory is refused: core.dir.absent). */
export const coreFileAbsent: ModuleSpec = {
  name: 'core.file.absent',
  description: 'a file or symbolic link does not exist',
  params: { type: 'object', additionalProperties: false, required: ['path'], properties: { path: ABS_PATH } },
};

/** No directory is at `path`: it is removed with everything in it. Refuses `/`, system folders and the soul's own paths. */
export const coreDirAbsent: ModuleSpec = {
  name: 'core.dir.absent',
  description: 'a directory does not exist (removed with its contents)',
  params: { type: 'object', additionalProperties: false, required: ['path'], properties: { path: ABS_PATH } },
};
