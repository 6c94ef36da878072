/**
 * Differential test: every corpus case rendered by the keeper's template
 * engine and by Go's text/template (missingkey=error) must give the same
 * output, and fail or succeed alike.
 */
import * as assert from 'node:assert/strict';
import { CORPUS } from './corpus';
import { runGo, type GoResult } from './go-runner';
import { compileTemplate, runTemplate } from '../../scenario/template';

function renderTs(template: string, data: unknown): { ok: boolean; output: string; error?: string } {
  const c = compileTemplate(template);
  if (!c.ok) return { ok: false, output: '', error: c.message };
  const r = runTemplate(c.value, JSON.parse(JSON.stringify(data)));
  return r.ok ? { ok: true, output: r.value } : { ok: false, output: '', error: r.message };
}

describe('template engine vs Go text/template (differential corpus)', function () {
  this.timeout(180_000);
  let go: Map<string, GoResult>;

  before(function () {
    go = new Map(runGo(CORPUS).map((r) => [r.name, r]));
  });

  it('has at least 200 cases with unique names', function () {
    assert.ok(CORPUS.length >= 200, `corpus has ${CORPUS.length} cases`);
    assert.equal(new Set(CORPUS.map((c) => c.name)).size, CORPUS.length);
  });

  for (const c of CORPUS) {
    it(c.name, function () {
      const want = go.get(c.name)!;
      const got = renderTs(c.template, c.data);
      assert.equal(
        got.ok,
        want.ok,
        `error/no-error differs: go=${want.ok ? 'ok' : want.error} ts=${got.ok ? 'ok' : got.error}`,
      );
      if (want.ok) assert.equal(got.output, want.output);
    });
  }
});
