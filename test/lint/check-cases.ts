/**
 * The static checker's cases (scenario/check/check-*.test.ts): a service that breaks exactly one
 * thing, and the finding it must produce (rule, file:line:col, message, a fix). One file a rule
 * family; each runs its cases the same way here.
 */
import * as assert from 'node:assert/strict';
import { loadServiceFromDir } from '../../scenario/load/dir';
import type { RenderError } from '../../scenario/errors';
import { tempService, cleanupTempServices } from './temp-service';

/** A scenario of one task `t` of `module` with `params` (indented lines) and `extra` task keys. */
export const task = (module: string, params: string, extra = ''): string =>
  `tasks:\n  - name: t\n    module: ${module}\n    params:\n${params}${extra}`;

export interface Case {
  name: string;
  files: Record<string, string>;
  rule: string;
  at: [string, number, number];
  message: RegExp;
  base?: Record<string, string>;
}

/** One test a case (inside a describe): the finding is there, where it says, with a fix. */
export function caseTests(CASES: Case[]): void {
  after(cleanupTempServices);

  for (const c of CASES) {
    it(`${c.rule}: ${c.name}`, function () {
      const errors = loadServiceFromDir(c.base ? tempService(c.files, c.base) : tempService(c.files)).errors;
      const hit = errors.find((e: RenderError) => e.rule === c.rule && c.message.test(e.message));
      assert.ok(
        hit,
        `no ${c.rule} matching ${c.message} in:\n${errors.map((e) => `${e.file}:${e.line}:${e.col} ${e.rule} ${e.message}`).join('\n')}`,
      );
      assert.deepEqual([hit.file, hit.line, hit.col], c.at);
      assert.ok(hit.fix && hit.fix.length > 5, 'every finding carries a fix');
    });
  }
}
