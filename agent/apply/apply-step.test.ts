import assert from 'node:assert/strict';
import { promises as fs, realpathSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createFakeRunner } from '../exec/testing';
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
    assert.deepEqual(calls[0]?.ctx, { dryRun: true, showContent: false });
    // Content is shown only in a dry run the keeper allowed it for.
    await applyStep(step({ dryRun: true, showContent: true }), deps);
    assert.deepEqual(calls[1]?.ctx, { dryRun: true, showContent: true });
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
