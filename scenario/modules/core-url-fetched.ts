import type { ModuleSpec } from './types';
import { ABS_PATH, ACCOUNT, FILE_MODE } from './core-file-present';

/** An http or https URL (no other scheme: no file://, no ftp://). */
export const HTTP_URL = {
  type: 'string',
  minLength: 8,
  maxLength: 8192,
  pattern: '^https?://[^\\s/?#]+([/?#]\\S*)?$',
} as const;
/** The checksum the downloaded bytes must have: `sha256:` and 64 lowercase hex digits. */
export const SHA256_CHECKSUM = { type: 'string', pattern: '^sha256:[0-9a-f]{64}$' } as const;

/**
 * A file downloaded from `url` whose bytes have `checksum` (required): fetched only when the file's
 * checksum differs, into a temp file beside it, verified, then renamed into place (Ansible `get_url`,
 * Salt `file.managed` with `source_hash`).
 */
export const coreUrlFetched: ModuleSpec = {
  name: 'core.url.fetched',
  description: 'a file downloaded from an http(s) URL, verified against its sha256 checksum',
  params: {
    type: 'object',
    additionalProperties: false,
    required: ['path', 'url', 'checksum'],
    properties: {
      path: ABS_PATH,
      url: HTTP_URL,
      checksum: SHA256_CHECKSUM,
      mode: FILE_MODE,
      owner: ACCOUNT,
      group: ACCOUNT,
      timeout: { type: 'integer', minimum: 1, maximum: 86400 },
    },
  },
};
