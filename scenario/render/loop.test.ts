import * as assert from 'node:assert/strict';
import { render, type RenderResult } from './render';
import { loadServiceFromDir } from '../load/dir';
import { tempService, cleanupTempServices } from '../../test/lint/temp-service';
import type { RenderPlan } from './plan';
import { LIMITS } from '../limits';

const web = {
  sid: 'web-1.example.com',
  soulprint: { fqdn: 'web-1.example.com', os_family: 'debian', covens: ['web'], disks: ['sda', 'sdb', 'sdc'] },
};
const db = {
  sid: 'db-1.example.com',
  soulprint: { fqdn: 'db-1.example.com', os_family: 'rhel', covens: ['db'], disks: [] },
};

function ok(r: RenderResult): RenderPlan {
  assert.ok(r.ok, r.ok ? '' : JSON.stringify(r.errors, null, 1));
  return r.plan;
}

function errs(r: RenderResult) {
  assert.ok(!r.ok, 'expected render to fail');
  return r.errors;
}

const SITES = `input:
  upstreams: {type: list, default: [{name: api, port: 8081}, {name: web, port: 8082}, {name: admin, port: 8083}]}
tasks:
  - name: before
    module: core.pkg.installed
    params: {name: nginx}
  - name: site
    module: core.file.rendered
    loop: input.upstreams
    when: item.name != "admin"
    params:
      path: "/etc/nginx/sites/\${item.name}-\${index + 1}.conf"
      template: site.tmpl
      vars: {host: "\${soulprint.self.fqdn}"}
    register: sites
  - name: reload
    module: core.file.present
    params: {path: /run/reload, content: "x"}
    onchanges: [site]
    require: [before, site]
    when: sites.exists(s, s.changed)
`;

describe('render: loop:', function () {
  after(cleanupTempServices);

  it('makes one step per item, named <task>[<i>], with item and loop in params, when and the template', function () {
    const dir = tempService({
      'scenario/create/main.yml': SITES,
      'templates/site.tmpl': 'upstream {{ .item.name }} 127.0.0.1:{{ .item.port }}; # {{ .index }} on {{ .host }}\n',
    });
    const plan = ok(
      render({ service: loadServiceFromDir(dir), operation: 'create', input: {}, state: {}, hosts: [web] }),
    );
    const steps = plan.hosts[0]!.steps;
    assert.deepEqual(
      steps.map((s) => [s.index, s.name, s.skip ?? null]),
      [
        [0, 'before', null],
        [1, 'site[0]', null],
        [2, 'site[1]', null],
        [3, 'site[2]', 'when'],
        [4, 'reload', null],
      ],
    );
    assert.equal(steps[1]!.params['path'], '/etc/nginx/sites/api-1.conf');
    assert.equal(steps[2]!.params['content'], 'upstream web 127.0.0.1:8082; # 1 on web-1.example.com\n');
    assert.deepEqual(steps[2]!.loop, { index0: 1, length: 3, item: { name: 'web', port: 8082 } });
    // Every item step registers into the one list; the left-out item holds its place in it.
    assert.deepEqual(
      steps.slice(1, 4).map((s) => s.register),
      ['sites', 'sites', 'sites'],
    );
    assert.deepEqual(steps[3]!.loop, { index0: 2, length: 3, item: { name: 'admin', port: 8083 } });
    // A requisite naming a looped task stands for every one of its steps.
    assert.deepEqual(steps[4]!.onchanges, [1, 2, 3]);
    assert.deepEqual(steps[4]!.require, [0, 1, 2, 3]);
    assert.equal(steps[4]!.when, 'sites.exists(s, s.changed)');
  });

  it('the list may differ per host; an empty list leaves one step out with skip loop, and indexes follow each host', function () {
    const dir = tempService({
      'scenario/create/main.yml':
        'tasks:\n  - name: disk\n    module: core.file.present\n    loop: soulprint.self.disks\n    params: {path: "/etc/disks/${item}", content: "${string(index)}"}\n    register: d\n' +
        '  - name: after\n    module: core.pkg.installed\n    params: {name: x}\n    require: disk\n',
    });
    const plan = ok(
      render({ service: loadServiceFromDir(dir), operation: 'create', input: {}, state: {}, hosts: [web, db] }),
    );
    assert.deepEqual(
      plan.hosts[0]!.steps.map((s) => [s.index, s.name, s.params['path'] ?? null]),
      [
        [0, 'disk[0]', '/etc/disks/sda'],
        [1, 'disk[1]', '/etc/disks/sdb'],
        [2, 'disk[2]', '/etc/disks/sdc'],
        [3, 'after', null],
      ],
    );
    assert.equal(plan.hosts[0]!.steps[2]!.params['content'], '2');
    assert.deepEqual(
      plan.hosts[1]!.steps.map((s) => [s.index, s.name, s.skip ?? null, s.loop ?? null]),
      [
        [0, 'disk', 'loop', { index0: 0, length: 0 }],
        [1, 'after', null, null],
      ],
    );
    assert.deepEqual(plan.hosts[1]!.steps[1]!.require, [0]);
  });

  it('a YAML list is a loop too, its strings interpolated', function () {
    const dir = tempService({
      'scenario/create/main.yml':
        'input:\n  base: {type: string, default: /srv}\ntasks:\n  - name: dirs\n    module: core.file.present\n    loop: ["${input.base}/a", "/b"]\n    params: {path: "${item}/keep", content: ""}\n',
    });
    const plan = ok(
      render({ service: loadServiceFromDir(dir), operation: 'create', input: {}, state: {}, hosts: [web] }),
    );
    assert.deepEqual(
      plan.hosts[0]!.steps.map((s) => s.params['path']),
      ['/srv/a/keep', '/b/keep'],
    );
  });

  it('a loop that is not a list on a host fails render at the loop expression', function () {
    const dir = tempService({
      'scenario/create/main.yml':
        'input:\n  names: {type: map, default: {a: 1}}\ntasks:\n  - name: f\n    module: core.file.present\n    loop: "input.names"\n    params: {path: "/etc/${item}", content: ""}\n',
    });
    // `map` input: the type is known offline, so soul-lint refuses it already (SL022 at the loop).
    const lint = loadServiceFromDir(dir).errors;
    assert.deepEqual(
      lint.map((e) => [e.rule, e.line, e.col]),
      [['SL022', 6, 11]],
    );
    assert.match(lint[0]!.message, /loop must be a list, but the expression is map/);
    // A dyn value (a host fact) is known only at render: the error names the host and the position.
    const dyn = tempService({
      'scenario/create/main.yml':
        'tasks:\n  - name: f\n    module: core.file.present\n    loop: soulprint.self.fqdn\n    params: {path: "/etc/${item}", content: ""}\n',
    });
    const e = errs(
      render({ service: loadServiceFromDir(dyn), operation: 'create', input: {}, state: {}, hosts: [web] }),
    );
    assert.deepEqual(
      e.map((x) => [x.rule, x.file, x.line, x.col]),
      [['SL022', 'scenario/create/main.yml', 4, 11]],
    );
    assert.equal(e[0]!.message, 'on host web-1.example.com: loop of task "f" must give a list, it gave a string');
  });

  it("an error in one item's params points at the expression, naming the host", function () {
    const dir = tempService({
      'scenario/create/main.yml':
        'input:\n  xs: {type: list, default: [{p: /a}, {q: 1}]}\ntasks:\n  - name: f\n    module: core.file.present\n    loop: input.xs\n    params: {path: "${item.p}", content: ""}\n',
    });
    const e = errs(
      render({ service: loadServiceFromDir(dir), operation: 'create', input: {}, state: {}, hosts: [web] }),
    );
    assert.deepEqual(
      e.map((x) => [x.rule, x.line, x.col]),
      [['SL021', 7, 28]],
    );
    assert.match(e[0]!.message, /^on host web-1.example.com: CEL evaluation error: No such key: p/);
  });

  it('counts loop items against the limits: items per loop and steps per host', function () {
    const items = Array.from({ length: LIMITS.maxLoopItems + 1 }, (_, i) => `p${i}`);
    const dir = tempService({
      'scenario/create/main.yml':
        'input:\n  xs: {type: list}\ntasks:\n  - name: f\n    module: core.pkg.installed\n    loop: input.xs\n    params: {name: "${item}"}\n',
    });
    const svc = loadServiceFromDir(dir);
    const e = errs(render({ service: svc, operation: 'create', input: { xs: items }, state: {}, hosts: [web] }));
    assert.deepEqual(
      e.map((x) => [x.rule, x.line, x.col]),
      [['SL022', 6, 11]],
    );
    assert.match(
      e[0]!.message,
      new RegExp(`has ${LIMITS.maxLoopItems + 1} items, over the limit of ${LIMITS.maxLoopItems}`),
    );

    const three = tempService({
      'scenario/create/main.yml':
        'input:\n  xs: {type: list}\ntasks:\n' +
        ['a', 'b', 'c']
          .map(
            (n) =>
              `  - name: ${n}\n    module: core.pkg.installed\n    loop: input.xs\n    params: {name: "\${item}"}\n`,
          )
          .join(''),
    });
    const full = Array.from({ length: LIMITS.maxLoopItems }, (_, i) => `p${i}`);
    const e2 = errs(
      render({ service: loadServiceFromDir(three), operation: 'create', input: { xs: full }, state: {}, hosts: [web] }),
    );
    assert.deepEqual(
      e2.map((x) => [x.rule, x.line]),
      [['SL022', 14]],
    );
    assert.match(
      e2[0]!.message,
      new RegExp(`more than ${LIMITS.maxStepsPerHost} steps for one host \\(loop items counted\\)`),
    );
  });
});
