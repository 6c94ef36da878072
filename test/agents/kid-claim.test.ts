// One live keeper per kid, on the real stack (Redis holds the claim): a second keeper with a kid
// that is live refuses to start with the reason and the fix; a clean stop frees the kid at once; a
// crashed keeper's claim (no longer renewed) is taken over after it lapses, so a restart works.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { silentLogger } from '../../common/logger';
import { connectCache, type Cache } from '../../platform/cache';
import { loadConfig } from '../../platform/config/load';
import { CLAIM_TTL_MS } from '../../keeper/kid-claim';
import { startKeeper } from '../../keeper/server';
import { cleanupKeeperFiles, initTestKeeper, startTestKeeper, type TestKeeper } from '../support/keeper';
import { stackEnv } from '../support/stack-env';

describe('keeper kid: one live keeper per kid', function () {
  this.timeout(60_000);
  const kid = `kid-${randomBytes(3).toString('hex')}`;
  const claimKey = `keeper:kid:${kid}`;
  let a: TestKeeper | undefined;
  let cache: Cache;

  before(async () => {
    const env = stackEnv();
    cache = await connectCache(env.REDIS_ADDR, env.REDIS_PASSWORD, silentLogger);
  });
  after(async () => {
    await a?.stop().catch(() => undefined);
    await cache?.quit();
  });
  const holderPid = async () => (JSON.parse((await cache.get(claimKey)) ?? 'null') as { pid: number } | null)?.pid;

  it('refuses a second keeper while the first with the same kid is live, naming it and the fix', async () => {
    a = await startTestKeeper({ kid });
    assert.equal(await holderPid(), process.pid);
    const b = await initTestKeeper({ kid });
    try {
      await assert.rejects(startKeeper(loadConfig(b.configFile), silentLogger), (err: Error) => {
        assert.equal(err.name, 'StartupError');
        assert.match(
          err.message,
          new RegExp(`another keeper with kid ${kid} is live \\(host [^,]+, pid ${process.pid}, since `),
        );
        assert.match(err.message, /Give this one another kid in its config, or stop the other first/);
        return true;
      });
      // The refused keeper took nothing: the first still holds its kid and answers.
      assert.equal((await fetch(`${a.baseUrl}/readyz`)).status, 200);
      assert.equal(await holderPid(), process.pid);
    } finally {
      await cleanupKeeperFiles(b);
    }
  });

  it('frees the kid on a clean stop, and the next keeper with it starts', async () => {
    await a!.stop();
    a = undefined;
    assert.equal(await cache.get(claimKey), null, 'a clean stop releases the claim');
    a = await startTestKeeper({ kid });
    assert.equal((await fetch(`${a.baseUrl}/readyz`)).status, 200);
  });

  it('takes over the claim of a keeper that died (nobody renews it) once it lapses', async () => {
    await a!.stop();
    a = undefined;
    // What a SIGKILLed keeper leaves: its claim, with its full time to live, renewed by nobody.
    await cache.set(claimKey, JSON.stringify({ token: 'dead', host: 'old-host', pid: 1, since: 'earlier' }), {
      PX: CLAIM_TTL_MS,
    });
    a = await startTestKeeper({ kid });
    assert.equal((await fetch(`${a.baseUrl}/readyz`)).status, 200);
    assert.equal(await holderPid(), process.pid, 'the new keeper holds the kid now');
  });
});
