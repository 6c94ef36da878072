import * as assert from 'node:assert/strict';
import { mergeInput } from './input-merge';

describe('a run input merged over the last input', function () {
  const last = {
    root: '/srv',
    port: 80,
    upstreams: [
      { host: 'a', port: 1 },
      { host: 'b', port: 2 },
      { host: 'c', port: 3 },
    ],
    password: 'secretstore:keeper/scenario/x/runs/r1#password',
  };

  it('a named key replaces, every other key (lists and secret references too) stays', function () {
    const m = mergeInput(last, { port: 8080 });
    assert.deepEqual(m.input, { ...last, port: 8080 });
    assert.deepEqual([m.set, m.kept, m.removed], [['port'], ['root', 'upstreams', 'password'], []]);
  });

  it('a list is replaced whole, not merged item by item', function () {
    assert.deepEqual(mergeInput(last, { upstreams: [{ host: 'd', port: 4 }] }).input.upstreams, [
      { host: 'd', port: 4 },
    ]);
  });

  it('null removes a key (an optional input goes back to its default)', function () {
    const m = mergeInput(last, { port: null, nothing: null });
    assert.equal('port' in m.input, false);
    assert.deepEqual(
      [m.removed, m.kept],
      [
        ['port', 'nothing'],
        ['root', 'upstreams', 'password'],
      ],
    );
  });

  it('no input keeps the last input as it was; a first run merges over nothing', function () {
    assert.deepEqual(mergeInput(last, undefined).input, last);
    assert.deepEqual(mergeInput(undefined, { port: 1 }), { input: { port: 1 }, kept: [], set: ['port'], removed: [] });
  });

  it('replace: the given input is the whole input, as before merging existed; without input the last one stays', function () {
    assert.deepEqual(mergeInput(last, { root: '/x' }, 'replace'), {
      input: { root: '/x' },
      kept: [],
      set: ['root'],
      removed: [],
    });
    assert.deepEqual(mergeInput(last, undefined, 'replace').input, last);
  });

  it('the last input is not changed in place', function () {
    const copy = structuredClone(last);
    mergeInput(last, { port: 1, root: null });
    assert.deepEqual(last, copy);
  });
});
