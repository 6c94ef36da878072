import type { ModuleSpec } from './types';
import { ABS_PATH } from './core-file-present';

/**
 * A tar (plain, gzip, xz, bzip2, zstd) or zip archive on the host unpacked into `dest`: again only when
 * `creates` does not exist, or, without `creates`, when the archive's sha256 differs from the one the
 * last extraction recorded in `dest` (Ansible `unarchive` with `remote_src`, Salt `archive.extracted`).
 */
export const coreArchiveExtracted: ModuleSpec = {
  name: 'core.archive.extracted',
  description: 'an archive on the host is unpacked into a directory',
  params: {
    type: 'object',
    additionalProperties: false,
    required: ['src', 'dest'],
    properties: {
      src: ABS_PATH,
      dest: ABS_PATH,
      creates: ABS_PATH,
      strip_components: { type: 'integer', minimum: 0, maximum: 32 },
    },
  },
};
