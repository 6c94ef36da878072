/**
 * Writes a service repository into a fresh temporary directory, for tests
 * that need one exact file layout per rule.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export const MINIMAL_SERVICE = 'name: demo\nstate_schema_version: 1\n';
export const MINIMAL_CREATE = 'tasks:\n  - name: pkg\n    module: core.pkg.installed\n    params:\n      name: curl\n';

const made: string[] = [];

export function tempService(
  files: Record<string, string>,
  base: Record<string, string> = { 'service.yml': MINIMAL_SERVICE, 'scenario/create/main.yml': MINIMAL_CREATE },
): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keeper-svc-'));
  made.push(dir);
  for (const [rel, text] of Object.entries({ ...base, ...files })) {
    const abs = path.join(dir, rel);
    fs.mkdirSync(path.dirname(abs), { recursive: true });
    fs.writeFileSync(abs, text);
  }
  return dir;
}

export function cleanupTempServices(): void {
  for (const d of made.splice(0)) fs.rmSync(d, { recursive: true, force: true });
}
