import assert from 'node:assert/strict';
import { Gathering } from './converge-gather';

describe('converger gathering window', () => {
  it('starts at once when no other host is on its way', () => {
    const g = new Gathering(2000, 10_000);
    assert.equal(g.ready('web', ['a'], 0, 0), true);
    g.ready('db', ['x'], 2, 0);
    assert.equal(g.ready('db', ['x', 'y', 'z'], 0, 500), true, 'the last awaited host arrived: no quiet time');
  });

  it('holds the targets until none has joined for the quiet time, then lets the run start', () => {
    const g = new Gathering(2000, 10_000);
    assert.equal(g.ready('web', ['a'], 1, 0), false, 'the first look only opens the window');
    assert.equal(g.ready('web', ['a', 'b'], 1, 900), false, 'b joined: the quiet time starts again');
    assert.equal(g.ready('web', ['a', 'b'], 1, 2000), false);
    assert.equal(g.ready('web', ['a', 'b'], 1, 2900), true, 'nothing joined for 2 s');
  });

  it('starts at the latest after the longest wait, however steady the arrivals', () => {
    const g = new Gathering(2000, 10_000);
    for (let t = 0; t < 10_000; t += 1000) assert.equal(g.ready('web', [`h${t}`], 1, t), false, `at ${t} ms`);
    assert.equal(g.ready('web', ['h10000'], 1, 10_000), true);
  });

  it('keeps one window per incarnation, and a closed window opens anew on the next arrival', () => {
    const g = new Gathering(2000, 10_000);
    g.ready('web', ['a'], 1, 0);
    g.ready('db', ['x'], 1, 1500);
    assert.equal(g.ready('web', ['a'], 1, 2000), true);
    assert.equal(g.ready('db', ['x'], 1, 2000), false, "db's window opened later");
    g.keepOnly(new Set(['db']));
    assert.equal(g.ready('web', ['c'], 1, 2100), false, "web's run started: c opens a new window");
    assert.equal(g.ready('db', ['x'], 1, 3500), true);
  });
});
