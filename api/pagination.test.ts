import assert from 'node:assert/strict';
import { ApiProblem } from './problems';
import { decodeCursor, encodeCursor, pageBody } from './pagination';

describe('api/pagination: opaque list cursors', () => {
  const KEY = /^[a-z0-9.-]+$/;

  it('round-trips a key and answers {items, next_cursor}', () => {
    const body = pageBody({ items: [1, 2], next: 'web-2.example.com' }, (n) => n * 10);
    assert.deepEqual(body.items, [10, 20]);
    assert.equal(decodeCursor(body.next_cursor ?? undefined, KEY), 'web-2.example.com');
    assert.equal(pageBody({ items: [] }, (n: number) => n).next_cursor, null);
  });

  it('refuses a cursor it did not issue, or one whose key has the wrong shape, with a 400 naming the field', () => {
    for (const bad of [
      'xyz',
      Buffer.from('k1:UPPER').toString('base64url'),
      Buffer.from('k2:abc').toString('base64url'),
      encodeCursor('a\u0000b'),
    ]) {
      assert.throws(
        () => decodeCursor(bad, KEY),
        (err: unknown) =>
          err instanceof ApiProblem && err.status === 400 && err.body().errors?.[0].path === '/query/cursor',
      );
    }
    assert.equal(decodeCursor(undefined, KEY), undefined);
  });
});
