/**
 * soul-lint on the example services: findings, exit codes, and SARIF that
 * validates against the official SARIF 2.1.0 schema (shipped by
 * @microsoft/jest-sarif, draft-04, checked with ajv-draft-04).
 */
import * as assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Ajv from 'ajv-draft-04';
import { runCli } from '../../lint/cli';
import { fixtureService, repoRoot } from './paths';
import { cleanupTempServices, tempService } from './temp-service';

interface SarifLog {
  runs: Array<{
    tool: { driver: { rules: Array<{ id: string }> } };
    results: Array<{ ruleId: string; ruleIndex: number; locations: Array<{ physicalLocation: unknown }> }>;
  }>;
}

function lint(...argv: string[]): { code: number; out: string; err: string } {
  let out = '';
  let err = '';
  const code = runCli(argv, {
    stdout: (s) => {
      out += s;
    },
    stderr: (s) => {
      err += s;
    },
  });
  return { code, out, err };
}

describe('soul-lint', function () {
  this.timeout(30_000);

  it('exits 0 on a clean service', function () {
    const r = lint(fixtureService('motd'));
    assert.equal(r.code, 0);
    assert.match(r.out, /no problems found/);
  });

  it('exits 1 and lists every finding with rule, position, message and fix', function () {
    const r = lint(fixtureService('broken-scenario'), '--format', 'json');
    assert.equal(r.code, 1);
    const report = JSON.parse(r.out) as {
      findings: Array<{ rule: string; file: string; line: number; col: number; message: string; fix: string }>;
    };
    assert.deepEqual(
      report.findings.map((f) => `${f.file}:${f.line}:${f.col} ${f.rule}`),
      [
        'scenario/create/main.yml:4:14 SL008',
        'scenario/create/main.yml:10:13 SL009',
        'scenario/create/main.yml:17:32 SL012',
        'scenario/create/main.yml:18:7 SL010',
        'scenario/create/main.yml:19:15 SL016',
        'scenario/create/main.yml:24:19 SL012',
        'scenario/create/main.yml:25:24 SL011',
        'scenario/create/main.yml:30:17 SL015',
        'templates/page.tmpl:1:17 SL013',
        'templates/page.tmpl:2:4 SL014',
      ],
    );
    assert.ok(report.findings.every((f) => f.message && f.fix));
  });

  it('the example services examples/nginx-site and examples/app-settings are clean (CI lints them here)', function () {
    for (const example of ['nginx-site', 'app-settings']) {
      const r = lint(path.join(repoRoot(), 'examples', example), '--format', 'json');
      assert.deepEqual(JSON.parse(r.out).findings, [], example);
      assert.equal(r.code, 0, example);
    }
  });

  it('reports the manifest rules: version field, missing create, missing migrations', function () {
    const r = lint(fixtureService('broken-manifest'));
    assert.equal(r.code, 1);
    assert.match(r.out, /^scenario\/create\/main.yml:1:1 {2}error {2}SL005 \(create-scenario\) {2}/m);
    assert.match(
      r.out,
      /^service.yml:2:1 {2}error {2}SL004 \(no-version-field\) {2}service.yml has a `version` field/m,
    );
    assert.match(
      r.out,
      /^service.yml:3:23 {2}error {2}SL006 \(migrations-present\) {2}state_schema_version is 2 but migrations\/2.yml is missing/m,
    );
    assert.match(r.out, /3 error\(s\)/);
  });

  it('reports an anchors bomb as a YAML finding', function () {
    const r = lint(fixtureService('broken-yaml'));
    assert.equal(r.code, 1);
    assert.match(
      r.out,
      /scenario\/create\/main.yml:5:37 {2}error {2}SL001 \(yaml-syntax\) {2}aliases expand to more than 100000 nodes/,
    );
  });

  it('exits 2 on usage and I/O errors', function () {
    assert.equal(lint('--format', 'xml', '.').code, 2);
    assert.equal(lint('a', 'b').code, 2);
    const missing = lint(path.join(os.tmpdir(), 'no-such-service-dir'));
    assert.equal(missing.code, 2);
    assert.match(missing.err, /is not a directory/);
  });

  it('writes SARIF 2.1.0 that validates against the official schema', function () {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sarif-'));
    const file = path.join(dir, 'out.sarif');
    const r = lint(fixtureService('broken-scenario'), '--format', 'sarif', '--output', file);
    assert.equal(r.code, 1);
    const sarif = JSON.parse(fs.readFileSync(file, 'utf8')) as SarifLog;
    fs.rmSync(dir, { recursive: true, force: true });
    const schema = JSON.parse(
      fs.readFileSync(require.resolve('@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json'), 'utf8'),
    );
    // The official schema has a pattern that is not valid in unicode mode.
    const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false, unicodeRegExp: false });
    const validate = ajv.compile(schema);
    assert.ok(validate(sarif), JSON.stringify(validate.errors, null, 1));
    const run = sarif.runs[0]!;
    const results = run.results;
    assert.equal(results.length, 10);
    assert.deepEqual(results[1]!.locations[0]!.physicalLocation, {
      artifactLocation: { uri: 'scenario/create/main.yml', uriBaseId: 'SRCROOT' },
      region: { startLine: 10, startColumn: 13, endLine: 10, endColumn: 30 },
    });
    assert.equal(results[1]!.ruleId, 'SL009');
    assert.equal(run.tool.driver.rules[results[1]!.ruleIndex]!.id, 'SL009');
  });

  describe('template vars, positions and inline suppression', function () {
    after(cleanupTempServices);
    const rendered = (vars: string, comment = '') =>
      `tasks:\n  - name: page\n    module: core.file.rendered\n    params:\n      path: /srv/page\n      template: page.tmpl${comment}\n${vars}`;

    it("finds a template field the task's vars never provide, naming the rule, with its end column in SARIF", function () {
      const dir = tempService({
        'scenario/create/main.yml': rendered(''),
        'templates/page.tmpl': 'Hi {{ .greeting }}\n',
      });
      const text = lint(dir);
      assert.equal(text.code, 1);
      assert.match(
        text.out,
        /^scenario\/create\/main.yml:6:7 {2}error {2}SL025 \(template-vars\) {2}template templates\/page.tmpl:1:7 reads \.greeting, which the task's vars never provide/m,
      );
      const sarif = JSON.parse(lint(dir, '--format', 'sarif').out);
      assert.deepEqual(sarif.runs[0].results[0].locations[0].physicalLocation.region, {
        startLine: 6,
        startColumn: 7,
        endLine: 6,
        endColumn: 26,
      });
      // With the field in vars, the service is clean.
      assert.equal(
        lint(
          tempService({
            'scenario/create/main.yml': rendered('      vars:\n        greeting: hello\n'),
            'templates/page.tmpl': 'Hi {{ .greeting }}\n',
          }),
        ).code,
        0,
      );
    });

    it('finds a registered name read before the task that registers it, and requisites naming a later or missing task, with positions', function () {
      const dir = tempService({
        'scenario/create/main.yml':
          'tasks:\n  - name: a\n    module: core.file.present\n    params: {path: /tmp/a, content: x}\n    when: b.changed\n' +
          '  - name: b\n    module: core.file.present\n    params: {path: /tmp/b, content: x}\n    register: b\n    onchanges: [c]\n' +
          '  - name: c\n    module: core.file.present\n    params: {path: /tmp/c, content: x}\n    require: [nope]\n',
      });
      const r = lint(dir, '--format', 'json');
      assert.equal(r.code, 1);
      const found = (JSON.parse(r.out).findings as any[]).map(
        (f) => `${f.file}:${f.line}:${f.col} ${f.rule} ${f.message} | ${f.fix}`,
      );
      assert.equal(found.length, 3, found.join('\n'));
      assert.match(
        found[0]!,
        /^scenario\/create\/main.yml:5:11 SL012 .*b \| "b" is registered by this task or a later one/,
      );
      assert.match(found[1]!, /^scenario\/create\/main.yml:10:17 SL016 requisite "c" names this task or a later one/);
      assert.match(found[2]!, /^scenario\/create\/main.yml:14:15 SL016 requisite "nope" names no task/);
    });

    it('an inline suppression with a reason silences the finding (kept in JSON and SARIF); one without a reason does not, and is itself a finding', function () {
      const ok = tempService({
        'scenario/create/main.yml': rendered('', '  # soul-lint: ignore SL025 -- greeting is optional in this test'),
        'templates/page.tmpl': 'Hi {{ .greeting }}\n',
      });
      const r = lint(ok);
      assert.equal(r.code, 0, r.out);
      assert.match(r.out, /no problems found; 1 suppressed inline/);
      const json = JSON.parse(lint(ok, '--format', 'json').out);
      assert.deepEqual(
        json.findings.map((f: any) => [f.rule, f.suppressed]),
        [['SL025', { reason: 'greeting is optional in this test' }]],
      );
      const sarif = JSON.parse(lint(ok, '--format', 'sarif').out);
      assert.deepEqual(sarif.runs[0].results[0].suppressions, [
        { kind: 'inSource', justification: 'greeting is optional in this test' },
      ]);

      const bare = lint(
        tempService({
          'scenario/create/main.yml': rendered('', '  # soul-lint: ignore SL025'),
          'templates/page.tmpl': 'Hi {{ .greeting }}\n',
        }),
      );
      assert.equal(bare.code, 1);
      assert.match(bare.out, /SL025 \(template-vars\)/);
      assert.match(
        bare.out,
        /^scenario\/create\/main.yml:6:28 {2}error {2}SL026 \(suppression-reason\) {2}a soul-lint suppression needs a reason/m,
      );
    });
  });

  it('bin/soul-lint runs the built CLI with the same exit codes', function () {
    const bin = path.join(repoRoot(), 'bin', 'soul-lint');
    assert.equal(spawnSync(process.execPath, [bin, fixtureService('motd')]).status, 0);
    assert.equal(spawnSync(process.execPath, [bin, fixtureService('broken-manifest')]).status, 1);
    assert.equal(spawnSync(process.execPath, [bin, '--nope']).status, 2);
    assert.match(execFileSync(process.execPath, [bin, '--help']).toString(), /soul-lint \[DIR\]/);
  });

  it('warns on a core.cmd.run with no guard (SL033), naming the fix; guarded commands and a reasoned suppression pass; the exit stays 0', function () {
    const tasks =
      'tasks:\n' +
      '  - name: reindex\n    module: core.cmd.run\n    params: {argv: [/usr/bin/app, reindex]}\n' +
      '  - name: made\n    module: core.cmd.run\n    params: {argv: [/usr/bin/app, init], creates: /srv/app/.init}\n' +
      '  - name: gone\n    module: core.cmd.run\n    params: {argv: [/usr/bin/app, drop], removes: /srv/app/old}\n' +
      '  - name: checked\n    module: core.cmd.run\n    params: {argv: [/usr/bin/app, seed], unless: [/usr/bin/app, seeded]}\n' +
      '  - name: only\n    module: core.cmd.run\n    params: {argv: [/usr/bin/app, fix], onlyif: [/usr/bin/app, broken]}\n' +
      '  - name: after\n    module: core.cmd.run\n    params: {argv: [/usr/bin/app, reload]}\n    onchanges: [made]\n' +
      '  - name: cond\n    module: core.cmd.run\n    params: {argv: [/usr/bin/app, warm]}\n    when: "true"\n' +
      '  - name: harmless\n    # soul-lint: ignore SL033 -- printing the version changes nothing\n' +
      '    module: core.cmd.run\n    params: {argv: [/usr/bin/app, --version]}\n';
    const r = lint(tempService({ 'scenario/create/main.yml': tasks }));
    assert.equal(r.code, 0, r.out);
    assert.match(
      r.out,
      /^scenario\/create\/main.yml:3:13 {2}warning {2}SL033 \(unguarded-command\) {2}task "reindex": core.cmd.run has no guard, so it runs \(and reports a change\) on every run; steps should be idempotent\n {4}fix: add `creates: <a path the command makes>`, `removes: <a path it deletes>`, `unless: \[<a check that exits 0 when done>\]` or `onlyif: \[\.\.\.\]`, or run it only on a change \(`onchanges: \[<task>\]`\) or a condition \(`when:`\)$/m,
    );
    const json = JSON.parse(lint(tempService({ 'scenario/create/main.yml': tasks }), '--format', 'json').out) as {
      findings: Array<{ rule: string; severity: string; line: number; suppressed?: { reason: string } }>;
    };
    assert.deepEqual(
      json.findings.map((f) => [f.rule, f.severity, f.line, f.suppressed?.reason ?? null]),
      [
        ['SL033', 'warning', 3, null],
        ['SL033', 'warning', 27, 'printing the version changes nothing'],
      ],
    );
  });
});
