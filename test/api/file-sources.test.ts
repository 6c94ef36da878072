// One cluster, one view of the sources (issue 33), on the real stack with two keepers of one cluster
// (one database, one task queue): a keeper that cannot load a registered source says so at start
// (/readyz `sources`, keeper_sources_unreachable, a log line), while staying ready; a file://
// service is refused while two keepers are live (409 naming both kids and the fix, nothing stored)
// and accepted again once one keeper is left.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { silentLogger } from '../../common/logger';
import { loadConfig } from '../../platform/config/load';
import { startKeeper, type RunningKeeper } from '../../keeper/server';
import { prepareKeeperConfig, startTestKeeper, type TestKeeper, type TestKeeperFiles } from '../support/keeper';
import { serviceRepo } from '../support/service-repo';
import { assertProblem, call, sleep } from './helpers';

describe('service sources seen by every keeper of a cluster', function () {
  this.timeout(120_000);
  const notShared = (doc: Record<string, any>) => {
    doc.services.git.file_shared = false;
  };
  let a: TestKeeper;
  let b: RunningKeeper | undefined;
  let bFiles: TestKeeperFiles | undefined;
  let bUrls: { base: string; metrics: string };

  before(async () => {
    a = await startTestKeeper({ mutate: notShared });
  });
  after(async () => {
    await b?.stop().catch(() => undefined);
    if (bFiles) fs.rmSync(bFiles.dir, { recursive: true, force: true });
    await a?.stop();
  });
  const api = (method: string, p: string, body?: unknown) => call(a.baseUrl, method, p, { token: a.adminToken, body });

  it('a second keeper that cannot load a registered source reports it at start, and stays ready', async () => {
    const gone = serviceRepo();
    assert.equal((await api('POST', '/v1/services', { name: 'gone', git: gone.url, ref: 'main' })).status, 201);
    // The path exists for the keeper that registered it, not for the one starting now: moved away.
    fs.renameSync(gone.dir, `${gone.dir}.elsewhere`);
    try {
      bFiles = await prepareKeeperConfig({
        kid: `${a.config.kid}-b`,
        db: a.db,
        secretName: a.secretName,
        mutate: (doc) => {
          doc.temporal = { ...doc.temporal, ...a.doc.temporal };
          notShared(doc);
        },
      });
      const config = loadConfig(bFiles.configFile);
      bUrls = { base: `http://${config.listen.openapi.addr}`, metrics: `http://${config.listen.metrics.addr}` };
      b = await startKeeper(config, silentLogger);
      let readyz: any;
      for (let i = 0; i < 100; i++) {
        const r = await fetch(`${bUrls.base}/readyz`);
        readyz = { http: r.status, ...(await r.json()) };
        if (readyz.sources.checked_at !== null) break;
        await sleep(100);
      }
      assert.equal(readyz.http, 200, 'one unreachable source does not make the keeper unready');
      assert.equal(readyz.sources.checked, 1);
      assert.deepEqual(
        readyz.sources.unreachable.map((u: any) => [u.service, u.git]),
        [['gone', gone.url]],
      );
      assert.match(readyz.sources.unreachable[0].reason, /repository was not found/);
      const metrics = await (await fetch(`${bUrls.metrics}/metrics`)).text();
      assert.match(metrics, /^keeper_sources_unreachable\{kid="[^"]+-b"\} 1$/m);
    } finally {
      fs.renameSync(`${gone.dir}.elsewhere`, gone.dir);
    }
  });

  it('refuses a file:// service while two keepers are live, naming both and the fix; accepts it with one', async () => {
    const repo = serviceRepo();
    const refused = await api('POST', '/v1/services', { name: 'local', git: repo.url, ref: 'main' });
    assertProblem(refused, 409, /2 keepers of this cluster are live/);
    assert.match(refused.body.detail, new RegExp(`\\(${a.config.kid}, ${a.config.kid}-b\\)`));
    assert.match(refused.body.detail, /services\.git\.file_shared: true/);
    assert.equal((await api('GET', '/v1/services/local')).status, 404, 'nothing stored');

    await b!.stop();
    b = undefined;
    const accepted = await api('POST', '/v1/services', { name: 'local', git: repo.url, ref: 'main' });
    assert.equal(accepted.status, 201, accepted.text);
  });
});
