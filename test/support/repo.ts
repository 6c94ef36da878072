// Locates the repository root from compiled tests (dist/test/...) or sources alike.
import fs from 'node:fs';
import path from 'node:path';

export function repoRoot(): string {
  for (let dir = __dirname; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json')) && fs.existsSync(path.join(dir, 'Makefile'))) return dir;
  }
  throw new Error('cannot find the repository root from ' + __dirname);
}
