import assert from 'node:assert/strict';
import { promises as fs, realpathSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createFakeRunner } from '../exec/testing';
import { createSystemd } from '../exec/systemd';
import { Ledger } from '../ledger/ledger';
import { createStateRegistry } from '../state/registry';
import type { StateContext, StateModule, ModuleResult } from '../state/types';
import { applyStep, type ApplyStepDeps, type StepToApply } from './apply-step';

/** A module that counts its runs; optionally slow, so concurrent deliveries overlap. */
function countingModule(result: ModuleResult = { changed: true, ok: true, output: 'did it' }, delayMs = 0) {
  const calls: Array<{ params: unknown; ctx: StateContext }> = [];
  const mod: StateModule = {
    name: 'test.count.done',
    async run(params, ctx) {
      calls.push({ params, ctx });
      if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
      return result;
    },
  };
  return { mod, calls };
}

const registryOf = (...mods: StateModule[]) => ({ get: (n: string) => mods.find((m) => m.name === n) });
const fixedClock = { now: () => new Date('2025-05-01T12:00:00.000Z') };

describe('applyStep', () => {
  let dir: string;
  let ledger: Ledger;
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(realpathSync(os.tmpdir()), 'keeper-apply-'));
    ledger = await Ledger.open(path.join(dir, 'ledger'));
  });
  afterEach(async () => {
    await ledger.close();
    await fs.rm(dir, { recursive: true, force: true });
  });

  const step = (over: Partial<StepToApply> = {}): StepToApply => ({
    applyId: 'apply-7',
    host: 'web1.example.org',
    index: 0,
    module: 'test.count.done',
    params: { a: 1 },
    ...over,
  });

  it('runs the module once, records before returning, and replays a redelivery without acting', async () => {
    const { mod, calls } = countingModule();
    const deps: ApplyStepDeps = { registry: registryOf(mod), ledger, clock: fixedClock };
    const first = await applyStep(step(), deps);
    assert.deepEqual(first, {
      changed: true,
      ok: true,
      output: 'did it',
      replayed: false,
      dryRun: false,
      started_at: '2025-05-01T12:00:00.000Z',
      finished_at: '2025-05-01T12:00:00.000Z',
    });
    const onDisk = await fs.readFile(path.join(dir, 'ledger', 'apply-7.jsonl'), 'utf8');
    assert.match(onDisk, /"index":0,"host":"web1.example.org","module":"test.count.done","changed":true/);

    const again = await applyStep(step(), deps);
    assert.deepEqual(again, { ...first, replayed: true });
    assert.equal(calls.length, 1);
    assert.deepEqual(calls[0], { params: { a: 1 }, ctx: { dryRun: false, showContent: false } });
  });

  it('replays from disk after the soul restarts', async () => {
    const { mod, calls } = countingModule({ changed: false, ok: false, output: 'it failed' });
    await applyStep(step({ index: 3 }), { registry: registryOf(mod), ledger });
    await ledger.close();
    ledger = await Ledger.open(path.join(dir, 'ledger'));
    const replay = await applyStep(step({ index: 3 }), { registry: registryOf(mod), ledger });
    assert.deepEqual([replay.replayed, replay.ok, replay.output], [true, false, 'it failed']);
    assert.equal(calls.length, 1);
  });

  it('acts once when the same step is delivered several times at the same moment', async () => {
    const { mod, calls } = countingModule(undefined, 30);
    const deps = { registry: registryOf(mod), ledger };
    const outcomes = await Promise.all(Array.from({ length: 5 }, () => applyStep(step(), deps)));
    assert.equal(calls.length, 1);
    assert.deepEqual(outcomes.map((o) => o.replayed).sort(), [false, true, true, true, true]);
    assert.ok(outcomes.every((o) => o.ok && o.changed && o.output === 'did it'));
  });

  it('does not serialise different steps behind each other', async () => {
    // Each run waits until all four are inside the module (or gives up after 2s): only possible
    // when different steps really run side by side.
    let inside = 0;
    let maxInside = 0;
    let allIn!: () => void;
    const gate = new Promise<void>((r) => (allIn = r));
    const mod: StateModule = {
      name: 'test.count.done',
      async run() {
        maxInside = Math.max(maxInside, ++inside);
        if (inside === 4) allIn();
        await Promise.race([gate, new Promise((r) => setTimeout(r, 2000))]);
        inside--;
        return { changed: true, ok: true, output: 'ok' };
      },
    };
    await Promise.all([0, 1, 2, 3].map((index) => applyStep(step({ index }), { registry: registryOf(mod), ledger })));
    assert.equal(maxInside, 4);
  });

  it('answers an unknown module with ok:false and records that answer', async () => {
    const r = await applyStep(step({ module: 'core.nope.present' }), { registry: registryOf(), ledger });
    assert.deepEqual(
      [r.ok, r.changed, r.output],
      [false, false, 'unknown state module "core.nope.present" on this soul'],
    );
    assert.equal((await ledger.get('apply-7', 0))?.ok, false);
    const proto = await applyStep(step({ index: 1, module: '__proto__' }), {
      registry: createStateRegistry({ facts: {}, runner: createFakeRunner().run }),
      ledger,
    });
    assert.match(proto.output, /unknown state module "__proto__"/);
  });

  it('turns a throwing module into ok:false instead of a crash', async () => {
    const throwing: StateModule = {
      name: 'test.throw.now',
      run: () => {
        throw new Error('boom');
      },
    };
    const rejecting: StateModule = {
      name: 'test.reject.now',
      run: async () => Promise.reject(new Error('async boom')),
    };
    const deps = { registry: registryOf(throwing, rejecting), ledger };
    const a = await applyStep(step({ module: 'test.throw.now' }), deps);
    const b = await applyStep(step({ index: 1, module: 'test.reject.now' }), deps);
    assert.deepEqual([a.ok, a.changed, a.output], [false, false, 'test.throw.now: boom']);
    assert.deepEqual([b.ok, b.output], [false, 'test.reject.now: async boom']);
  });

  it('runs a dry run without reading or writing the ledger', async () => {
    const { mod, calls } = countingModule();
    const deps = { registry: registryOf(mod), ledger };
    const dry = await applyStep(step({ dryRun: true }), deps);
    assert.deepEqual([dry.dryRun, dry.replayed], [true, false]);
    assert.deepEqual(calls[0]?.ctx, { dryRun: true, showContent: false, decided: [] });
    // Content is shown only in a dry run the keeper allowed it for.
    await applyStep(step({ dryRun: true, showContent: true }), deps);
    assert.deepEqual(calls[1]?.ctx, { dryRun: true, showContent: true, decided: [] });
    assert.deepEqual(await ledger.list('apply-7'), []);
    await applyStep(step(), deps);
    assert.equal(calls.length, 3, 'the real run after two dry runs still acts');
  });

  it('refuses an invalid step key without running the module', async () => {
    const { mod, calls } = countingModule();
    const deps = { registry: registryOf(mod), ledger };
    assert.match((await applyStep(step({ applyId: '../../etc' }), deps)).output, /apply_id "..\/..\/etc" is not valid/);
    assert.match((await applyStep(step({ index: -1 }), deps)).output, /step index -1 is not valid/);
    assert.equal(calls.length, 0);
  });

  it('refuses a step recorded for another host', async () => {
    const { mod, calls } = countingModule();
    await applyStep(step(), { registry: registryOf(mod), ledger });
    const r = await applyStep(step({ host: 'db1.example.org' }), { registry: registryOf(mod), ledger });
    assert.equal(r.ok, false);
    assert.match(r.output, /recorded for host web1.example.org, not db1.example.org/);
    assert.equal(calls.length, 1);
  });

  it('reports ok:false when the result cannot be made durable', async () => {
    const { mod } = countingModule();
    const broken = {
      get: async () => undefined,
      record: async () => Promise.reject(new Error('ENOSPC: no space left on device')),
    };
    const r = await applyStep(step(), { registry: registryOf(mod), ledger: broken });
    assert.equal(r.ok, false);
    assert.match(r.output, /did it; result not recorded in the ledger: ENOSPC/);
  });

  it('applies a real file step once, and a new run of it finds nothing to change', async () => {
    const registry = createStateRegistry({ facts: {}, runner: createFakeRunner().run });
    const target = path.join(dir, 'etc', 'motd');
    const req = step({ module: 'core.file.present', params: { path: target, content: 'hello\n', mode: '0644' } });
    const first = await applyStep(req, { registry, ledger });
    assert.deepEqual([first.ok, first.changed, first.replayed], [true, true, false], first.output);
    await fs.writeFile(target, 'edited by hand\n');
    const redelivered = await applyStep(req, { registry, ledger });
    assert.deepEqual([redelivered.changed, redelivered.replayed], [true, true]);
    assert.equal(await fs.readFile(target, 'utf8'), 'edited by hand\n', 'a redelivery does not act again');
    const nextRun = await applyStep({ ...req, applyId: 'apply-8' }, { registry, ledger });
    assert.deepEqual([nextRun.changed, nextRun.replayed], [true, false]);
    const settled = await applyStep({ ...req, applyId: 'apply-9' }, { registry, ledger });
    assert.deepEqual([settled.ok, settled.changed], [true, false]);
  });

  it("keeps in its ledger the output scrubbed of the keeper's values, or the keeper's withheld text", async () => {
    const { mod } = countingModule({ changed: false, ok: true, output: 'password = hunter2-canary\n' });
    const deps = { registry: registryOf(mod), ledger };
    const redact = [{ value: 'hunter2-canary', placeholder: '«secret:s/db#password»' }];
    const scrubbed = await applyStep(step({ index: 1, redact }), deps);
    const withheld = await applyStep(step({ index: 2, redact, withhold: 'output withheld: it may read /etc/x' }), deps);
    assert.equal(scrubbed.output, 'password = «secret:s/db#password»\n');
    assert.equal(withheld.output, 'output withheld: it may read /etc/x');
    const text = await fs.readFile(path.join(dir, 'ledger', 'apply-7.jsonl'), 'utf8');
    assert.ok(!text.includes('hunter2-canary'), text);
    assert.match(text, /«secret:s\/db#password»/);
  });
});

// Issue 47: the plan of a first create, where an earlier step of the plan would install the package
// that brings the service's user and unit. The real core.* modules on fake host tools: dpkg knows no
// postgresql-15, apt has a candidate, systemd knows no unit, the account files have no postgres.
describe('a plan whose later steps depend on a package an earlier step would install', () => {
  let dir: string;
  let ledger: Ledger;
  let deps: ApplyStepDeps;
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(realpathSync(os.tmpdir()), 'keeper-pending-'));
    ledger = await Ledger.open(path.join(dir, 'ledger'));
    await fs.writeFile(path.join(dir, 'passwd'), 'root:x:0:0:root:/root:/bin/sh\n');
    await fs.writeFile(path.join(dir, 'group'), 'root:x:0:\n');
    const fake = createFakeRunner((cmd) => {
      if (cmd.file === 'dpkg-query') return { code: 1, stderr: 'dpkg-query: no packages found matching postgresql-15' };
      if (cmd.file === 'apt-cache')
        return { stdout: 'postgresql-15:\n  Installed: (none)\n  Candidate: 15.8-0+deb12u1\n' };
      if (cmd.file === 'systemctl' && cmd.args[0] === 'show')
        return { stdout: 'LoadState=not-found\nActiveState=inactive\nUnitFileState=\nNeedDaemonReload=no\nMainPID=0' };
      return {};
    });
    deps = {
      registry: createStateRegistry({
        facts: { os_family: 'debian' },
        runner: fake.run,
        accounts: { passwd: path.join(dir, 'passwd'), group: path.join(dir, 'group') },
        init: createSystemd(fake.run),
      }),
      ledger,
    };
  });
  afterEach(async () => {
    await ledger.close();
    await fs.rm(dir, { recursive: true, force: true });
  });
  const conf = path.join('/tmp', `keeper-pending-${process.pid}`, 'postgresql.conf');
  const steps = (dryRun: boolean, applyId = 'plan-1'): StepToApply[] => [
    { applyId, host: 'db1', index: 0, module: 'core.pkg.installed', params: { name: 'postgresql-15' }, dryRun },
    {
      applyId,
      host: 'db1',
      index: 1,
      module: 'core.file.present',
      params: { path: conf, content: 'max_connections = 100\n', owner: 'postgres', group: 'postgres', mode: '0640' },
      dryRun,
    },
    {
      applyId,
      host: 'db1',
      index: 2,
      module: 'core.service.running',
      params: { name: 'postgresql@15-main', enabled: true },
      dryRun,
    },
  ];

  it('answers "would ..." with what is decided at apply, after the step that installs the package', async () => {
    const out = [];
    for (const st of steps(true)) out.push(await applyStep(st, deps));
    assert.deepEqual(
      out.map((r) => [r.ok, r.changed]),
      [
        [true, true],
        [true, true],
        [true, true],
      ],
      JSON.stringify(out),
    );
    assert.equal(
      out[1]!.output,
      `would create ${conf} (mode 0640) (dry run; decided at apply: ` +
        `the content ${conf} replaces, if shipped by postgresql-15 (step 0 installs it); ` +
        `user "postgres" is not on this host yet: after step 0 installs postgresql-15; ` +
        `group "postgres" is not on this host yet: after step 0 installs postgresql-15)`,
    );
    assert.deepEqual((out[1]!.diff as Record<string, unknown>)['decided_at_apply'], [
      `the content ${conf} replaces, if shipped by postgresql-15 (step 0 installs it)`,
      'user "postgres" is not on this host yet: after step 0 installs postgresql-15',
      'group "postgres" is not on this host yet: after step 0 installs postgresql-15',
    ]);
    assert.equal(
      out[2]!.output,
      'would start postgresql@15-main, enable postgresql@15-main at boot (dry run; decided at apply: unit postgresql@15-main is not on this host yet: after step 0 installs postgresql-15)',
    );
  });

  it('without an earlier install the same steps fail their check as before; a real run is never predicted', async () => {
    const [, file, unit] = steps(true, 'plan-2');
    const f = await applyStep(file!, deps);
    assert.deepEqual(
      [f.ok, f.output],
      [
        false,
        'core.file.present: reading current state failed: unknown user "postgres" (not in ' +
          path.join(dir, 'passwd') +
          '; give a numeric id for directory-service accounts)',
      ],
    );
    const u = await applyStep(unit!, deps);
    assert.deepEqual(
      [u.ok, u.output],
      [
        false,
        'core.service.running: reading current state failed: no unit named postgresql@15-main on this host (systemd)',
      ],
    );
  });
});
