// Fault: the cache (Redis) restarted during a live run, every presence lease and the kid claim gone.
// The keeper runs on a private redis-server (test/support/redis-instance.ts) so the stack's shared
// one is never touched. Expected (docs/reliability.md): every soul's presence is back within 5 s of
// the cache coming back, and the run in flight finishes or locks, never half-commits.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { startRedisInstance, type RedisInstance } from '../support/redis-instance';
import { stackEnv } from '../support/stack-env';
import { api, waitFor } from '../runs/keeper';
import { midDispatch, settleAndCheck, startRig, type Rig } from './rig';

describe('fault: Redis restarted during a run (leases gone)', function () {
  this.timeout(240_000);
  let redis: RedisInstance;
  let rig: Rig;

  before(async () => {
    redis = await startRedisInstance(stackEnv().REDIS_PASSWORD);
    rig = await startRig({
      mutate: (doc) => {
        doc.cache.addr = redis.addr;
      },
      covens: [['web'], ['web']],
      steps: 4,
    });
  });
  after(async () => {
    await rig?.stop();
    await redis?.stop();
  });

  it('every soul is connected again within 5 s of the restart; the run ends ready or locked, each step once', async () => {
    const applyId = await rig.create('cache-fault');
    await midDispatch(rig, applyId);
    await redis.stop();
    await redis.start();
    const t0 = Date.now();
    await Promise.all(
      rig.souls.map((s) =>
        waitFor(
          `${s.sid} connected again`,
          async () => {
            // The lease itself, in the restarted cache, not only the registry's view of it.
            const lease = execFileSync('redis-cli', [
              '-p',
              redis.addr.split(':')[1]!,
              '--no-auth-warning',
              '-a',
              stackEnv().REDIS_PASSWORD,
              'GET',
              `keeper:presence:${s.sid}`,
            ])
              .toString()
              .trim();
            const r = await api(rig.k, 'GET', `/v1/souls/${s.sid}`);
            return lease !== '' && r.status === 200 && r.body.status === 'connected';
          },
          30_000,
          100,
        ),
      ),
    );
    const back = Date.now() - t0;
    console.log(`      presence back after the cache restart: ${back} ms`);
    assert.ok(back <= 5000, `presence back after ${back} ms (limit 5 s)`);

    const first = await settleAndCheck(rig, 'cache-fault');
    console.log(`      the run in flight ended ${first}`);
  });
});
