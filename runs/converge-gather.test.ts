import assert from 'node:assert/strict';
import { Gathering } from './converge-gather';

describe('converger gathering window', () => {
  it('holds the targets until none has joined for the quiet time, then lets the run start', () => {
    const g = new Gathering(2000, 10_000);
    assert.equal(g.ready('web', ['a'], 0), false, 'the first look only opens the window');
    assert.equal(g.ready('web', ['a', 'b'], 900), false, 'b joined: the quiet time starts again');
    assert.equal(g.ready('web', ['a', 'b'], 2000), false);
    assert.equal(g.ready('web', ['a', 'b'], 2900), true, 'nothing joined for 2 s');
  });

  it('starts at the latest after the longest wait, however steady the arrivals', () => {
    const g = new Gathering(2000, 10_000);
    for (let t = 0; t < 10_000; t += 1000) assert.equal(g.ready('web', [`h${t}`], t), false, `at ${t} ms`);
    assert.equal(g.ready('web', ['h10000'], 10_000), true);
  });

  it('keeps one window per incarnation, and a closed window opens anew on the next arrival', () => {
    const g = new Gathering(2000, 10_000);
    g.ready('web', ['a'], 0);
    g.ready('db', ['x'], 1500);
    assert.equal(g.ready('web', ['a'], 2000), true);
    assert.equal(g.ready('db', ['x'], 2000), false, "db's window opened later");
    g.keepOnly(new Set(['db']));
    assert.equal(g.ready('web', ['c'], 2100), false, "web's run started: c opens a new window");
    assert.equal(g.ready('db', ['x'], 3500), true);
  });
});
