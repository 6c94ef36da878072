// The folders core.*.absent never remove are one list (scenario/modules/protected-folders.ts): the
// soul refuses each at the step and soul-lint (SL027) reports each before any run. Before, the two
// kept copies; /usr/share, /etc/systemd, /mnt, /media and /lib32 were refused by the soul and passed
// by soul-lint.
import assert from 'node:assert/strict';
import { lintService } from '../../scenario/lint-service';
import { PROTECTED_FOLDERS } from '../../scenario/modules/protected-folders';
import { cleanupTempServices, tempService } from '../../test/lint/temp-service';
import { createFakeRunner } from '../exec/testing';
import { createStateRegistry } from './registry';

const registry = createStateRegistry({ facts: {}, runner: createFakeRunner().run });

/** What the soul answers to removing `path` with `module`, in a dry run (the refusal comes first). */
const soulRemoves = (module: string, path: string) => registry.get(module)!.run({ path }, { dryRun: true });

/** soul-lint's SL027 findings for one service whose only task removes `path` with `module`. */
function lintRemoval(module: string, path: string) {
  const dir = tempService({
    'scenario/create/main.yml': `tasks:\n  - name: t\n    module: ${module}\n    params:\n      path: ${JSON.stringify(path)}\n`,
  });
  return lintService(dir).filter((f) => f.rule === 'SL027');
}

describe('the protected folders: one list for the soul and soul-lint', () => {
  after(cleanupTempServices);

  it('the soul refuses, and soul-lint reports, every folder on the list', async () => {
    assert.ok(PROTECTED_FOLDERS.size >= 31, `${PROTECTED_FOLDERS.size} folders`);
    for (const folder of PROTECTED_FOLDERS) {
      const soul = await soulRemoves('core.dir.absent', folder);
      assert.equal(soul.ok, false, `${folder}: ${soul.output}`);
      assert.equal(soul.changed, false);
      // `/` is refused one step earlier, as no path a module may name (agent/state/file-target.ts).
      const why =
        folder === '/'
          ? 'param "path" names the root directory, not a file'
          : `refusing to remove ${folder}: a system folder`;
      assert.equal(soul.output, `core.dir.absent: invalid params: ${why}`);
      const lint = lintRemoval('core.dir.absent', folder);
      assert.equal(lint.length, 1, `${folder}: ${JSON.stringify(lint)}`);
      assert.match(lint[0]!.message, new RegExp(`would remove ${folder}, a system folder`));
    }
  });

  it('soul-lint now reports the folders only the soul refused before, for both removal modules', async () => {
    for (const folder of ['/usr/share', '/etc/systemd', '/mnt', '/media', '/lib32'])
      for (const module of ['core.dir.absent', 'core.file.absent']) {
        const soul = await soulRemoves(module, folder);
        assert.match(soul.output, new RegExp(`refusing to remove ${folder}: a system folder`));
        const lint = lintRemoval(module, `${folder}/`);
        assert.equal(lint.length, 1, `${module} ${folder}/: ${JSON.stringify(lint)}`);
        assert.match(lint[0]!.message, new RegExp(`${module} would remove ${folder}/, a system folder`));
        assert.match(lint[0]!.file, /scenario\/create\/main\.yml$/);
      }
  });

  it('a folder inside a protected one is neither refused by the soul nor reported by soul-lint', async () => {
    const inside = '/usr/share/keeper-protected-folders-test-absent';
    const soul = await soulRemoves('core.dir.absent', inside);
    assert.deepEqual([soul.ok, soul.changed], [true, false], soul.output);
    assert.deepEqual(lintRemoval('core.dir.absent', inside), []);
  });
});
