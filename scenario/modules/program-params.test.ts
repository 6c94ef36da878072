import assert from 'node:assert/strict';
import { ARGV } from './core-cmd-run';
import { VALIDATE } from './core-file-present';
import { UNIT_CONTENT } from './core-systemd-unit';
import { MODULES } from './index';

// A one-off execution may set a parameter that runs a program only for a role that may run
// core.cmd.run (runs/executions.ts): the list each module declares must name every such parameter,
// or a module allowed to a responder would run any command as root (issue 45 H-2, `validate`).
describe('module parameters that run programs', () => {
  // A unit file's content counts too: starting the unit runs its ExecStart= programs as root.
  it('every argv-shaped parameter (and unit file content) of every module is declared in programParams', () => {
    for (const [name, spec] of MODULES) {
      const props = (spec.params as { properties?: Record<string, unknown> }).properties ?? {};
      const commands = Object.entries(props)
        .filter(([, schema]) => schema === ARGV || schema === VALIDATE || schema === UNIT_CONTENT)
        .map(([k]) => k)
        .sort();
      assert.deepEqual([...(spec.programParams ?? [])].sort(), commands, name);
    }
  });

  it('are exactly the ones surveyed in the soul handlers (agent/state/file-state.ts, cmd-run.ts, systemd-unit.ts)', () => {
    const declared = Object.fromEntries(
      [...MODULES].filter(([, s]) => s.programParams?.length).map(([n, s]) => [n, s.programParams]),
    );
    assert.deepEqual(declared, {
      'core.file.present': ['validate'],
      'core.file.rendered': ['validate'],
      'core.cmd.run': ['argv', 'unless', 'onlyif'],
      'core.systemd.unit': ['content'],
    });
  });
});
