/**
 * Test paths that work from the TypeScript sources and from dist/: walk up
 * to the directory holding package.json, the repository root.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

export function repoRoot(from = __dirname): string {
  let dir = from;
  for (;;) {
    if (fs.existsSync(path.join(dir, 'package.json')) && fs.existsSync(path.join(dir, 'tsconfig.json'))) return dir;
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`no package.json above ${from}`);
    dir = up;
  }
}

export function fixtureService(name: string): string {
  return path.join(repoRoot(), 'test', 'fixtures', 'services', name);
}
