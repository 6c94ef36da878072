// keeperctl incarnations get: the drift lines an operator reads, including the count of checks in
// sync (their plans are not kept, so this line is their only record; docs/drift.md).
import assert from 'node:assert/strict';
import { incarnationDetails, inSyncText } from './incarnation-view';

const drift = {
  interval: '10m',
  auto_repair: false,
  status: 'in_sync',
  checked_at: '2026-11-26T10:00:00.000Z',
  plan_id: 'shop.create.drift.x1',
  drifted_sids: [],
  checks_in_sync: 12,
  last_in_sync_at: '2026-11-26T10:00:00.000Z',
};

describe('keeperctl incarnation view: drift checks in sync', () => {
  it('prints the count and the time of the last check in sync', () => {
    assert.equal(inSyncText(drift), '12 checks, the last at 2026-11-26T10:00:00.000Z');
    assert.equal(inSyncText({ ...drift, checks_in_sync: 1 }), '1 check, the last at 2026-11-26T10:00:00.000Z');
    assert.equal(inSyncText({ ...drift, checks_in_sync: 0, last_in_sync_at: null }), 'none yet');
  });

  it('says nothing about it for a keeper that does not report the count', () => {
    const { checks_in_sync: _n, last_in_sync_at: _t, ...older } = drift;
    assert.equal(inSyncText(older), null);
    assert.equal(inSyncText(undefined), null);
  });

  it('shows it as its own line of `incarnations get`, beside the outcome of the last check', () => {
    const out = incarnationDetails({ name: 'shop', drift: { ...drift, status: 'drifted', drifted_sids: ['web-2'] } });
    assert.match(out, /^drift:\s+every 10m: drifted \(web-2\) at 2026-11-26T10:00:00.000Z$/m);
    assert.match(out, /^drift_in_sync:\s+12 checks, the last at 2026-11-26T10:00:00.000Z$/m);
  });
});
