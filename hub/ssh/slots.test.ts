import assert from 'node:assert/strict';
import { Slots } from './slots';

describe('SSH session slots (ssh.max_sessions)', () => {
  it('lets at most max holders in at once and wakes the next waiter on release', async () => {
    const slots = new Slots(2);
    const a = await slots.take();
    const b = await slots.take();
    let third = false;
    const c = slots.take().then((r) => {
      third = true;
      return r;
    });
    await new Promise((r) => setImmediate(r));
    assert.equal(third, false, 'the third waits while two are held');
    a();
    a(); // released twice: counted once
    const rc = await c;
    assert.equal(third, true);
    let fourth = false;
    void slots.take().then(() => {
      fourth = true;
    });
    await new Promise((r) => setImmediate(r));
    assert.equal(fourth, false, 'a double release did not free a second slot');
    b();
    rc();
  });

  it('a waiter cancelled by its signal gives up without taking a slot, and the next waiter still gets in', async () => {
    const slots = new Slots(1);
    const held = await slots.take();
    const ac = new AbortController();
    const cancelled = slots.take(ac.signal);
    const next = slots.take();
    ac.abort();
    await assert.rejects(cancelled, /cancelled while waiting/);
    held();
    const r = await next;
    r();
  });
});
