// The version of this build (package.json's), reported by /metrics, the soul's hello and the CLIs.
import { readFileSync } from 'node:fs';
import path from 'node:path';

function findVersion(): string {
  for (let dir = __dirname; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    try {
      return (JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version: string }).version;
    } catch {
      /* keep walking up */
    }
  }
  return '0.0.0';
}

export const VERSION = findVersion();
