// Routing reads the souls' presence leases; a lease naming a keeper whose kid claim is gone (killed
// moments ago, the lease not yet expired) is no location: the re-routing waits for the soul to appear
// on the keeper it moves to instead of sending to a queue nobody polls (issue 33).
import assert from 'node:assert/strict';
import type { Cache } from '../../platform/cache';
import { presenceLocator } from './presence-lookup';

function cache(values: Record<string, string>): Cache {
  return { mGet: async (keys: string[]) => keys.map((k) => values[k] ?? null) } as unknown as Cache;
}

describe('presenceLocator: where souls are', () => {
  const lease = (kid: string) => JSON.stringify({ kid, epoch: 1 });

  it('names the keeper of a live lease, and none for a lease whose keeper’s kid claim is gone', async () => {
    const locate = presenceLocator(
      cache({
        'keeper:presence:s1': lease('A'),
        'keeper:presence:s2': lease('B'),
        'keeper:presence:s3': 'not json',
        'keeper:kid:B': '{"token":"t"}',
      }),
    );
    assert.deepEqual(await locate(['s1', 's2', 's3', 's4']), [null, 'B', null, null]);
  });

  it('reads nothing for no souls', async () => {
    assert.deepEqual(await presenceLocator(cache({}))([]), []);
  });
});
