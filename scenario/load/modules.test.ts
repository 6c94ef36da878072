// Modules shipped with a service: the contract and program checks (SL030), the tasks that use them
// (SL009, SL010 against the contract's schema), and the program render puts in each step.
import * as assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadServiceFromDir } from './dir';
import { render } from '../render/render';
import { tempService, cleanupTempServices } from '../../test/lint/temp-service';
import { repoRoot } from '../../test/support/repo';
import type { RenderError } from '../errors';

const PROGRAM = '#!/usr/bin/env node\nprocess.stdout.write(\'{"changed": false}\');\n';
const CONTRACT =
  'program: run.js\nstates:\n  present:\n    dry_run: true\n    params:\n      type: object\n      additionalProperties: false\n      required: [name]\n      properties:\n        name: {type: string}\n';
const USE = (params: string) => `tasks:\n  - name: t\n    module: demo.thing.present\n    params:\n${params}`;

/** A service `demo` with modules/thing: the contract, the program (executable unless told) and a task. */
function service(files: Record<string, string>, opts: { executable?: boolean } = {}): string {
  const dir = tempService({
    'modules/thing/module.yml': CONTRACT,
    'modules/thing/run.js': PROGRAM,
    'scenario/create/main.yml': USE('      name: x\n'),
    ...files,
  });
  const prog = path.join(dir, 'modules/thing/run.js');
  if (fs.existsSync(prog)) fs.chmodSync(prog, opts.executable === false ? 0o644 : 0o755);
  return dir;
}

const found = (errors: RenderError[]) => errors.map((e) => [e.rule, e.file, e.line, e.col, e.message]);

describe('modules shipped with a service (modules/<module>/module.yml)', function () {
  after(cleanupTempServices);

  it('loads each state as <service>.<module>.<state>; the kvmod example is clean', function () {
    const svc = loadServiceFromDir(service({}));
    assert.deepEqual(svc.errors, []);
    const m = svc.modules!.get('demo.thing.present')!;
    assert.deepEqual(
      [m.module, m.state, m.dryRun, m.timeoutMs, m.program.file],
      ['thing', 'present', true, 30_000, 'modules/thing/run.js'],
    );
    assert.equal(m.program.sha256, createHash('sha256').update(PROGRAM).digest('hex'));
    const kv = loadServiceFromDir(path.join(repoRoot(), 'test', 'fixtures', 'services', 'kvmod'));
    assert.deepEqual(kv.errors, []);
    assert.deepEqual([...kv.modules!.keys()], ['kvmod.kv.present', 'kvmod.misbehave.slow', 'kvmod.misbehave.chatty']);
  });

  it('SL030: the program must be there, executable, and start with #! (it runs as argv, no shell)', function () {
    const missing = loadServiceFromDir(service({ 'modules/thing/module.yml': CONTRACT.replace('run.js', 'gone.js') }));
    assert.deepEqual(found(missing.errors).slice(0, 1), [
      ['SL030', 'modules/thing/module.yml', 1, 10, 'program modules/thing/gone.js is missing'],
    ]);
    const plain = loadServiceFromDir(service({}, { executable: false })).errors;
    assert.deepEqual(found(plain).slice(0, 1), [
      ['SL030', 'modules/thing/module.yml', 1, 10, 'program modules/thing/run.js is not executable'],
    ]);
    assert.match(plain[0]!.fix ?? '', /chmod \+x modules\/thing\/run.js/);
    const script = loadServiceFromDir(service({ 'modules/thing/run.js': 'echo hi\n' })).errors;
    assert.match(script[0]!.message, /starts with neither #! nor an ELF header/);
    // A task using a module whose contract failed is then an unknown module (SL009) too.
    assert.deepEqual(
      plain.map((e) => e.rule),
      ['SL030', 'SL009'],
    );
  });

  it('a named runtime (node, sh) runs the program: no #! line or executable bit needed; render carries it', function () {
    const sh = 'echo \'{"changed": false}\'\n';
    const svc = loadServiceFromDir(
      service(
        { 'modules/thing/module.yml': `runtime: sh\n${CONTRACT}`, 'modules/thing/run.js': sh },
        { executable: false },
      ),
    );
    assert.deepEqual(svc.errors, []);
    assert.equal(svc.modules!.get('demo.thing.present')!.runtime, 'sh');
    const r = render({
      service: svc,
      operation: 'create',
      input: {},
      state: {},
      hosts: [{ sid: 'h1.example.com', soulprint: {} }],
    });
    assert.ok(r.ok, JSON.stringify(r));
    assert.equal(r.plan.hosts[0]!.steps[0]!.program!.runtime, 'sh');
    const bad = loadServiceFromDir(service({ 'modules/thing/module.yml': `runtime: python\n${CONTRACT}` })).errors;
    assert.deepEqual(
      bad.map((e) => [e.rule, e.line]),
      [
        ['SL030', 1],
        ['SL009', 3],
      ],
    );
    assert.match(bad[0]!.message, /runtime.*(node|allowed)/);
  });

  it("SL030: the contract's shape, its params schema, the module's name, and a service named core", function () {
    const shape = loadServiceFromDir(
      service({ 'modules/thing/module.yml': 'program: run.js\ntimeout: 900\nstates: {}\n' }),
    ).errors;
    assert.deepEqual(
      shape.filter((e) => e.rule === 'SL030').map((e) => [e.line, e.col]),
      [
        [2, 10],
        [3, 9],
      ],
    );
    const schema = loadServiceFromDir(
      service({ 'modules/thing/module.yml': CONTRACT.replace('type: string}', 'type: text}') }),
    ).errors;
    const bad = schema.find((e) => e.rule === 'SL030')!;
    assert.deepEqual([bad.line, bad.col], [6, 7]);
    assert.match(bad.message, /the params schema of state "present" is not a valid JSON schema: schema is invalid/);
    const notObject = loadServiceFromDir(
      service({ 'modules/thing/module.yml': 'program: run.js\nstates:\n  present:\n    params: {type: string}\n' }),
    ).errors;
    assert.match(notObject.find((e) => e.rule === 'SL030')!.message, /its `type` must be object/);
    const name = loadServiceFromDir(service({ 'modules/Thing-2/module.yml': CONTRACT })).errors;
    assert.deepEqual(
      found(name)
        .filter((e) => e[0] === 'SL030')
        .map((e) => e[1]),
      ['modules/Thing-2/module.yml'],
    );
    const core = loadServiceFromDir(
      service({
        'service.yml': 'name: core\nstate_schema_version: 1\n',
        'scenario/create/main.yml': 'tasks:\n  - name: t\n    module: core.thing.present\n    params: {name: x}\n',
      }),
    ).errors;
    assert.deepEqual(
      core.map((e) => [e.rule, e.message]),
      [
        ['SL030', 'a service named "core" cannot ship modules: their names would be core.*'],
        ['SL009', 'unknown module "core.thing.present"'],
      ],
    );
  });

  it('tasks using a module: params checked against its schema (SL010); an undeclared state is SL009 with the fix', function () {
    const unknown = loadServiceFromDir(
      service({ 'scenario/create/main.yml': USE('      name: x\n      colour: red\n') }),
    ).errors;
    assert.deepEqual(found(unknown), [
      ['SL010', 'scenario/create/main.yml', 6, 7, 'demo.thing.present: unknown parameter "colour"'],
    ]);
    assert.equal(unknown[0]!.fix, 'remove it; demo.thing.present takes: name');
    const typed = loadServiceFromDir(service({ 'scenario/create/main.yml': USE('      name: 5\n') })).errors;
    assert.deepEqual(found(typed), [
      ['SL010', 'scenario/create/main.yml', 5, 13, 'demo.thing.present: parameter "name" must be string'],
    ]);
    const state = loadServiceFromDir(
      service({ 'scenario/create/main.yml': USE('      name: x\n').replace('thing.present', 'thing.absent') }),
    ).errors;
    assert.deepEqual(found(state), [
      ['SL009', 'scenario/create/main.yml', 3, 13, 'unknown module "demo.thing.absent"'],
    ]);
    assert.equal(
      state[0]!.fix,
      'add modules/thing/module.yml declaring state "absent", or use one of: demo.thing.present',
    );
  });

  it('render puts the program (hash, bytes, dry run, timeout) in each step, the params as resolved, and checks them again', function () {
    const dir = service({
      'scenario/create/main.yml': 'input:\n  n: {type: string, default: web}\n' + USE('      name: "${input.n}"\n'),
    });
    const svc = loadServiceFromDir(dir);
    const r = render({
      service: svc,
      operation: 'create',
      input: {},
      state: {},
      hosts: [{ sid: 'h1.example.com', soulprint: {} }],
    });
    assert.ok(r.ok, JSON.stringify(r));
    const step = r.plan.hosts[0]!.steps[0]!;
    assert.deepEqual(step.params, { name: 'web' });
    assert.deepEqual(step.program, {
      sha256: createHash('sha256').update(PROGRAM).digest('hex'),
      content: Buffer.from(PROGRAM).toString('base64'),
      dry_run: true,
      timeout_ms: 30_000,
    });
    const bad = render({
      service: svc,
      operation: 'create',
      input: { n: 7 },
      state: {},
      hosts: [{ sid: 'h1.example.com', soulprint: {} }],
    });
    assert.ok(!bad.ok);
  });
});
