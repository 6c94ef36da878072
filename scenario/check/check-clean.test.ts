/**
 * Services the static checker must find clean: a gate it resolves, the motd example, the documented
 * module parameters, loops and the core library in use.
 */
import * as assert from 'node:assert/strict';
import { fixtureService } from '../../test/lint/paths';
import { loadServiceFromDir } from '../load/dir';
import { tempService, cleanupTempServices } from '../../test/lint/temp-service';
import { resolveGate } from '../gate';

describe('service checks: clean services', function () {
  after(cleanupTempServices);

  it('a gate reading registered results, facts and inputs is clean, and resolves to the run gate', function () {
    const text =
      "serial: 2\ngate:\n  health: 'pkg.ok && soulprint.self.covens.size() >= 0 && input.n > 0'\n  timeout: 90s\n  interval: 500ms\n  approval: true\n" +
      'input:\n  n: {type: integer, default: 1}\n' +
      'tasks:\n  - name: pkg\n    module: core.pkg.installed\n    params: {name: curl}\n    register: pkg\n';
    const loaded = loadServiceFromDir(tempService({ 'scenario/create/main.yml': text }));
    assert.deepEqual(loaded.errors, []);
    assert.deepEqual(resolveGate(loaded.scenarios.get('create')?.gate), {
      health: 'pkg.ok && soulprint.self.covens.size() >= 0 && input.n > 0',
      timeoutMs: 90_000,
      intervalMs: 500,
      approval: true,
    });
    const approvalOnly = loadServiceFromDir(
      tempService({ 'scenario/create/main.yml': text.replace(/  health:.*\n  timeout: 90s\n  interval: 500ms\n/, '') }),
    );
    assert.deepEqual(approvalOnly.errors, []);
    assert.deepEqual(resolveGate(approvalOnly.scenarios.get('create')?.gate), {
      timeoutMs: 60_000,
      intervalMs: 2_000,
      approval: true,
    });
  });

  it('the motd example service is clean', function () {
    assert.deepEqual(loadServiceFromDir(fixtureService('motd')).errors, []);
  });

  it('the documented module parameters are accepted: a package version, file owner/group/mode and a validate command', function () {
    const tasks =
      'tasks:\n  - name: pkg\n    module: core.pkg.installed\n    params:\n      name: nginx\n      version: "1.22.1-9"\n' +
      '  - name: conf\n    module: core.file.present\n    params:\n      path: /etc/app.conf\n      content: "x"\n      owner: root\n      group: "0"\n      mode: "0640"\n      validate: [/usr/bin/app, --check, "%s"]\n';
    assert.deepEqual(loadServiceFromDir(tempService({ 'scenario/create/main.yml': tasks })).errors, []);
    const noPlaceholder = loadServiceFromDir(
      tempService({ 'scenario/create/main.yml': tasks.replace('"%s"', '/etc/app.conf') }),
    ).errors;
    assert.equal(noPlaceholder.length, 1, JSON.stringify(noPlaceholder));
    assert.equal(noPlaceholder[0]!.rule, 'SL010');
    assert.match(noPlaceholder[0]!.message, /validate/);
  });

  it('a loop is clean whether or not its task reads item; a looped register is a list to later tasks', function () {
    const tasks =
      'input:\n  names: {type: list, default: [a, b]}\ntasks:\n' +
      '  - name: same\n    module: core.pkg.installed\n    params: {name: curl}\n    loop: input.names\n' +
      '  - name: each\n    module: core.file.rendered\n    loop: input.names\n    when: index < 5 && item != "z"\n    params: {path: "/etc/${item}", template: t.tmpl}\n    register: files\n' +
      '  - name: after\n    module: core.pkg.installed\n    params: {name: x}\n    when: files.exists(f, f.changed) && files[0].ok\n';
    assert.deepEqual(
      loadServiceFromDir(
        tempService({ 'scenario/create/main.yml': tasks, 'templates/t.tmpl': '{{ .item }} {{ .index }}\n' }),
      ).errors,
      [],
    );
    // Without loop:, the template's .item is a field no vars provide (SL025).
    const plain = tasks.replace(
      '    loop: input.names\n    when: index < 5 && item != "z"\n    params: {path: "/etc/${item}"',
      '    params: {path: "/etc/x"',
    );
    assert.deepEqual(
      loadServiceFromDir(
        tempService({ 'scenario/create/main.yml': plain, 'templates/t.tmpl': '{{ .item }} {{ .index }}\n' }),
      ).errors.map((e) => e.message.replace(/.* reads (\.\w+).*/, '$1')),
      ['.item', '.index'],
    );
  });

  it('the core library in use is clean: a reload on a trigger, a guarded command, accounts, a folder, a link, removals, package lists', function () {
    const tasks =
      'tasks:\n  - name: pkgs\n    module: core.pkg.installed\n    params: {name: [nginx-light, less]}\n' +
      '  - name: old\n    module: core.pkg.removed\n    params: {name: ed, purge: true}\n' +
      '  - name: grp\n    module: core.group.present\n    params: {name: web, gid: 2001}\n' +
      '  - name: usr\n    module: core.user.present\n    params: {name: web, uid: 2001, group: web, home: /srv/web, shell: /usr/sbin/nologin, system: true}\n' +
      '  - name: www\n    module: core.dir.present\n    params: {path: /srv/web/www, mode: "0750", owner: web, group: web}\n' +
      '  - name: conf\n    module: core.file.present\n    params: {path: /etc/nginx/sites-available/web, content: "x", validate: [/usr/sbin/nginx, -t, -c, "%s"]}\n' +
      '  - name: link\n    module: core.link.present\n    params: {path: /etc/nginx/sites-enabled/web, target: /etc/nginx/sites-available/web}\n' +
      '  - name: gone\n    module: core.file.absent\n    params: {path: /etc/nginx/sites-enabled/default}\n' +
      '  - name: reload\n    module: core.service.reloaded\n    params: {name: nginx}\n    onchanges: [conf, link]\n' +
      '  - name: up\n    module: core.service.running\n    params: {name: nginx, enabled: true}\n' +
      '  - name: migrate\n    module: core.cmd.run\n    params: {argv: [/usr/bin/app, migrate], cwd: /srv/web, env: {MODE: prod}, timeout: 600, creates: /srv/web/.migrated, unless: [/usr/bin/app, check]}\n' +
      '  - name: sh\n    module: core.cmd.run\n    params: {argv: ["echo done > /srv/web/done"], shell: true, removes: /srv/web/todo}\n' +
      '  - name: olddir\n    module: core.dir.absent\n    params: {path: /srv/old}\n' +
      '  - name: nouser\n    module: core.user.absent\n    params: {name: old, remove_home: true}\n' +
      '  - name: nogroup\n    module: core.group.absent\n    params: {name: old}\n' +
      '  - name: down\n    module: core.service.stopped\n    params: {name: apache2, enabled: false}\n' +
      '  - name: bounce\n    module: core.service.restarted\n    params: {name: nginx}\n    onchanges: pkgs\n';
    assert.deepEqual(loadServiceFromDir(tempService({ 'scenario/create/main.yml': tasks })).errors, []);
  });

  it('a service with no problems has no findings', function () {
    assert.deepEqual(loadServiceFromDir(tempService({})).errors, []);
  });
});
