import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { render, type RenderResult } from './render';
import { loadServiceFromDir } from '../load/dir';
import { fixtureService } from '../../test/lint/paths';
import { tempService, cleanupTempServices } from '../../test/lint/temp-service';
import type { RenderPlan } from './plan';

const web = {
  sid: 'web-1.example.com',
  soulprint: { fqdn: 'web-1.example.com', os_family: 'debian', covens: ['web'] },
};
const db = { sid: 'db-1.example.com', soulprint: { fqdn: 'db-1.example.com', os_family: 'rhel', covens: ['db'] } };

function ok(r: RenderResult): RenderPlan {
  assert.ok(r.ok, r.ok ? '' : JSON.stringify(r.errors, null, 1));
  return r.plan;
}

function errs(r: RenderResult) {
  assert.ok(!r.ok, 'expected render to fail');
  return r.errors;
}

describe('render', function () {
  after(cleanupTempServices);
  const motd = loadServiceFromDir(fixtureService('motd'));

  it('renders per-host ordered steps with every parameter resolved and the template content included', function () {
    const plan = ok(
      render({ service: motd, operation: 'create', input: { root: '/tmp/t' }, state: {}, hosts: [web, db] }),
    );
    assert.deepEqual(
      plan.hosts.map((h) => h.sid),
      [web.sid, db.sid],
    );
    const [pkg, file, marker] = plan.hosts[0]!.steps;
    assert.deepEqual(pkg, {
      index: 0,
      name: 'motd package',
      module: 'core.pkg.installed',
      params: { name: 'figlet' },
      register: 'pkg',
    });
    assert.equal(file!.params['path'], '/tmp/t/etc/motd');
    assert.equal(file!.params['content'], 'Welcome to web-1.example.com (DEBIAN)\nAdministrators: ann, bob\n');
    // The soul receives the rendered content only: the template and its vars stay on the keeper.
    assert.deepEqual(Object.keys(file!.params).sort(), ['content', 'mode', 'path']);
    // `when` reads a registered result: kept for apply time; onchanges names step 1.
    assert.equal(marker!.when, 'motd.changed');
    assert.deepEqual(marker!.onchanges, [1]);
    assert.equal(
      plan.hosts[1]!.steps[1]!.params['content'],
      'Welcome to db-1.example.com (RHEL)\nAdministrators: ann, bob\n',
    );
  });

  it('evaluates state_changes at render time from input and state', function () {
    const plan = ok(
      render({
        service: motd,
        operation: 'create',
        input: { message: 'Hi' },
        state: { revision: 4, keep: true },
        hosts: [web],
      }),
    );
    assert.deepEqual(plan.stateChanges.sets, [
      { key: 'message', value: 'Hi' },
      { key: 'root', value: '/tmp/keeper-demo' },
      { key: 'revision', value: 5 },
    ]);
    assert.deepEqual(plan.nextState, { revision: 5, keep: true, message: 'Hi', root: '/tmp/keeper-demo' });
  });

  it('a single ${} keeps the value type; mixed strings concatenate', function () {
    const dir = tempService({
      'scenario/create/main.yml':
        'input:\n  n: {type: integer, default: 3}\nstate_changes:\n  sets:\n    count: "${input.n}"\n    label: "n=${input.n}"\n    list: "${[input.n, 2]}"\ntasks:\n  - name: p\n    module: core.pkg.installed\n    params: {name: x}\n',
    });
    const plan = ok(render({ service: loadServiceFromDir(dir), operation: 'create', input: {}, state: {}, hosts: [] }));
    assert.deepEqual(plan.stateChanges.sets, [
      { key: 'count', value: 3 },
      { key: 'label', value: 'n=3' },
      { key: 'list', value: [3, 2] },
    ]);
  });

  it('applies serial batches and the scenario where: per host', function () {
    const hosts = [1, 2, 3, 4, 5].map((i) => ({
      sid: `h${i}.example.com`,
      soulprint: { fqdn: `h${i}.example.com`, os_family: i === 3 ? 'windows' : 'debian' },
    }));
    const plan = ok(render({ service: motd, operation: 'update', input: { message: 'x' }, state: {}, hosts }));
    assert.equal(plan.orchestration.serial, 2);
    assert.deepEqual(plan.orchestration.batches, [
      ['h1.example.com', 'h2.example.com'],
      ['h4.example.com', 'h5.example.com'],
    ]);
    assert.deepEqual(plan.orchestration.excluded, [
      { sid: 'h3.example.com', reason: 'the scenario `where:` is false' },
    ]);
    assert.equal(plan.hosts[0]!.steps[0]!.changed_when, 'result.changed');
    assert.equal(plan.hosts[0]!.steps[0]!.failed_when, '!result.ok');
  });

  it('records per host the facts its render read: by CEL, by a coven selector, a key looked for; all when listed', function () {
    const dir = tempService({
      'scenario/create/main.yml':
        'input:\n  by_host: {type: boolean, default: false}\ntasks:\n' +
        '  - name: file\n    module: core.file.present\n    params:\n      path: "/srv/${soulprint.self.fqdn}"\n' +
        '      content: "${input.by_host ? soulprint.self.hostname : \'static\'}"\n' +
        '  - name: web only\n    module: core.pkg.installed\n    params: {name: nginx}\n    on: ["coven:web"]\n' +
        '  - name: maybe\n    module: core.pkg.installed\n    params: {name: x}\n    when: has(soulprint.self.gpu)\n',
    });
    const service = loadServiceFromDir(dir);
    const host = { sid: web.sid, soulprint: { ...web.soulprint, hostname: 'web-1', addresses: ['10.0.0.1'] } };
    const reads = (input: Record<string, unknown>) =>
      ok(render({ service, operation: 'create', input, state: {}, hosts: [host] })).hosts[0]!.reads.facts;
    // Never `addresses` or `os_family`: a change to those does not make the plan stale.
    assert.deepEqual(reads({}), ['covens', 'fqdn', 'gpu']);
    assert.deepEqual(reads({ by_host: true }), ['covens', 'fqdn', 'gpu', 'hostname']);
    const all = tempService({
      'scenario/create/main.yml':
        'tasks:\n  - name: n\n    module: core.file.present\n    params: {path: /srv/n, content: "${string(soulprint.self.size())}"}\n',
    });
    const plan = ok(
      render({ service: loadServiceFromDir(all), operation: 'create', input: {}, state: {}, hosts: [host] }),
    );
    assert.deepEqual(plan.hosts[0]!.reads.facts, ['*']);
    // The plan keeps the plain soulprint (it is stored and sent), not the recording view of it.
    assert.deepEqual(JSON.parse(JSON.stringify(plan.hosts[0]!.soulprint)), host.soulprint);
  });

  it('on: selects hosts by coven or SID glob, and render-time when: false skips the step', function () {
    const dir = tempService({
      'scenario/create/main.yml':
        'tasks:\n  - name: web only\n    module: core.pkg.installed\n    params: {name: nginx}\n    on: ["coven:web"]\n  - name: debian only\n    module: core.pkg.installed\n    params: {name: apt-utils}\n    when: soulprint.self.os_family == "debian"\n  - name: db glob\n    module: core.pkg.installed\n    params: {name: pg}\n    on: "db-*.example.com"\n',
    });
    const plan = ok(
      render({ service: loadServiceFromDir(dir), operation: 'create', input: {}, state: {}, hosts: [web, db] }),
    );
    // Every host's plan holds every step; those left out carry the reason and no params.
    assert.deepEqual(
      plan.hosts[0]!.steps.map((s) => [s.index, s.skip ?? null]),
      [
        [0, null],
        [1, null],
        [2, 'on'],
      ],
    );
    assert.deepEqual(
      plan.hosts[1]!.steps.map((s) => [s.index, s.skip ?? null]),
      [
        [0, 'on'],
        [1, 'when'],
        [2, null],
      ],
    );
    assert.deepEqual(plan.hosts[1]!.steps[0]!.params, {});
  });

  it('is all-or-nothing: one host missing a fact fails the whole render with its position', function () {
    const bad = { sid: 'bare.example.com', soulprint: { os_family: 'debian' } };
    const e = errs(render({ service: motd, operation: 'create', input: {}, state: {}, hosts: [web, bad] }));
    // Both reads of the fact fail, each at its own position; nothing is planned for `web` either.
    assert.deepEqual(
      e.map((x) => [x.rule, x.file, x.line, x.col]),
      [
        ['SL021', 'scenario/create/main.yml', 34, 33],
        ['SL021', 'scenario/create/main.yml', 42, 56],
      ],
    );
    assert.match(e[0]!.message, /^on host bare.example.com: CEL evaluation error: No such key: fqdn/);
  });

  it('refuses unknown, missing and mistyped inputs', function () {
    const e = errs(
      render({ service: motd, operation: 'create', input: { root: 5, colour: 'red' }, state: {}, hosts: [web] }),
    );
    assert.deepEqual(
      e.map((x) => [x.rule, x.line, x.col, x.message]),
      [
        ['SL020', 1, 1, 'input "colour" is not declared by scenario/create/main.yml'],
        ['SL020', 3, 3, 'input "root" must be string, got an integer'],
      ],
    );
    const missing = errs(render({ service: motd, operation: 'update', input: {}, state: {}, hosts: [web] }));
    assert.match(missing[0]!.message, /input "message" is required/);
    assert.match(
      errs(render({ service: motd, operation: 'destroy', input: {}, state: {}, hosts: [] }))[0]!.message,
      /no operation "destroy"/,
    );
  });

  it('a template missing key is a render error at the template position', function () {
    const dir = tempService({
      // A key missing below the top level (the top level is known offline: SL025).
      'templates/a.tmpl': 'line one\nport={{ .cfg.port }}\n',
      'scenario/create/main.yml':
        'input:\n  cfg: {type: map, default: {}}\ntasks:\n  - name: f\n    module: core.file.rendered\n    params:\n      path: /etc/a\n      template: a.tmpl\n      vars: {cfg: "${input.cfg}"}\n',
    });
    const e = errs(
      render({ service: loadServiceFromDir(dir), operation: 'create', input: {}, state: {}, hosts: [web] }),
    );
    assert.deepEqual([e[0]!.rule, e[0]!.file, e[0]!.line, e[0]!.col], ['SL019', 'templates/a.tmpl', 2, 9]);
    assert.match(e[0]!.message, /map has no entry for key "port"/);
  });

  it('refuses to render a service with load errors', function () {
    const svc = loadServiceFromDir(fixtureService('broken-scenario'));
    const e = errs(render({ service: svc, operation: 'create', input: {}, state: {}, hosts: [web] }));
    assert.equal(e.length, svc.errors.length);
  });

  describe('bad input stays within fixed limits', function () {
    it('template recursion stops at the depth limit', function () {
      const dir = tempService({
        'templates/r.tmpl': '{{ define "r" }}x{{ template "r" . }}{{ end }}{{ template "r" . }}',
        'scenario/create/main.yml':
          'tasks:\n  - name: f\n    module: core.file.rendered\n    params: {path: /etc/r, template: r.tmpl}\n',
      });
      const e = errs(
        render({ service: loadServiceFromDir(dir), operation: 'create', input: {}, state: {}, hosts: [web] }),
      );
      assert.match(e[0]!.message, /exceeded maximum template depth/);
    });

    it('a huge loop stops at the step budget', function () {
      const dir = tempService({
        'templates/l.tmpl': '{{ range 100000000 }}x{{ end }}',
        'scenario/create/main.yml':
          'tasks:\n  - name: f\n    module: core.file.rendered\n    params: {path: /etc/l, template: l.tmpl}\n',
      });
      const started = Date.now();
      const e = errs(
        render({ service: loadServiceFromDir(dir), operation: 'create', input: {}, state: {}, hosts: [web] }),
      );
      assert.match(e[0]!.message, /budget|output exceeds/);
      assert.ok(Date.now() - started < 5000);
    });

    it('a CEL comprehension bomb stops at the expression budget, named at its file, line and column', function () {
      const dir = tempService({
        'scenario/create/main.yml':
          'input:\n  l: {type: list}\ntasks:\n  - name: f\n    module: core.file.present\n' +
          '    params: {path: /etc/cube, content: "${input.l.map(x, input.l.map(y, input.l.map(z, x + y + z))).size()}"}\n',
      });
      const l = Array.from({ length: 150 }, (_, i) => i);
      const e = errs(
        render({ service: loadServiceFromDir(dir), operation: 'create', input: { l }, state: {}, hosts: [web] }),
      );
      assert.equal(e.length, 1, JSON.stringify(e));
      assert.deepEqual([e[0]!.file, e[0]!.line, e[0]!.col, e[0]!.rule], ['scenario/create/main.yml', 6, 43, 'SL021']);
      assert.match(
        e[0]!.message,
        /CEL expression exceeded its (cost|time) budget .*: `input\.l\.map\(x, input\.l\.map\(y/,
      );
      assert.match(e[0]!.fix ?? '', /less work/);
    });

    it('a file over the size limit is refused without reading it', function () {
      const dir = tempService({ 'templates/big.tmpl': 'x'.repeat(1024 * 1024 + 1) });
      const e = loadServiceFromDir(dir).errors;
      assert.deepEqual([e[0]!.rule, e[0]!.file], ['SL002', 'templates/big.tmpl']);
      assert.match(e[0]!.message, /over the 1048576-byte limit/);
    });

    it('never reads through a symlink that leaves the repository', function () {
      const dir = tempService({});
      fs.mkdirSync(path.join(dir, 'templates'));
      fs.symlinkSync('/etc/passwd', path.join(dir, 'templates', 'passwd.tmpl'));
      const e = loadServiceFromDir(dir).errors;
      assert.equal(e[0]!.rule, 'SL002');
      assert.match(e[0]!.message, /resolves outside the repository/);
    });

    it('a template path with .. is refused at render even when built from input', function () {
      const dir = tempService({
        'templates/ok.tmpl': 'ok',
        'scenario/create/main.yml':
          'input:\n  t: {type: string, default: ok.tmpl}\ntasks:\n  - name: f\n    module: core.file.rendered\n    params:\n      path: /etc/f\n      template: "${input.t}"\n',
      });
      const svc = loadServiceFromDir(dir);
      ok(render({ service: svc, operation: 'create', input: {}, state: {}, hosts: [web] }));
      const e = errs(
        render({ service: svc, operation: 'create', input: { t: '../../etc/passwd.tmpl' }, state: {}, hosts: [web] }),
      );
      assert.match(e.map((x) => x.message).join('\n'), /points outside templates/);
    });
  });
});
