// The soul's version: package.json's, found by walking up from the compiled file.
import { readFileSync } from 'node:fs';
import path from 'node:path';

function findVersion(): string {
  for (let dir = __dirname; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    try {
      return (JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version: string }).version;
    } catch { /* keep walking up */ }
  }
  return '0.0.0';
}

export const SOUL_VERSION = findVersion();
