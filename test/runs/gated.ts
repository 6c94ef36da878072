// The gated fixture service (test/fixtures/services/gated: two `serial:` batches with an approval
// gate) created as incarnation `gated` on coven `edge`, up to the moment its run waits for approval
// after batch 1: where the API, keeperctl and /ui gate tests all begin.
import assert from 'node:assert/strict';
import type { KeeperAccess } from '../agents/harness';
import { api, waitFor } from './keeper';

/** The run's answer (GET .../runs/{apply_id}) while it waits for approval. */
export async function createGatedAndAwaitApproval(k: KeeperAccess, root: string): Promise<any> {
  const r = await api(k, 'POST', '/v1/incarnations', {
    name: 'gated',
    service: 'gated',
    covens: ['edge'],
    input: { root, greeting: 'v1' },
  });
  assert.equal(r.status, 202, JSON.stringify(r.body));
  const id = r.body.apply_id as string;
  return waitFor(
    'the run to wait for approval',
    async () => {
      const b = (await api(k, 'GET', `/v1/incarnations/gated/runs/${id}`)).body;
      return b.waiting?.for === 'approval' ? b : undefined;
    },
    120_000,
  );
}
