// The spec's minimum core is the database and the cache (issue 45): a keeper started while its
// Temporal is away starts, is ready (/readyz 200, Temporal listed as degraded), serves the registry
// and onboarding, refuses runs and executions with a 503 naming Temporal and the fix, and once
// Temporal answers picks it up by itself: a run then ends `ready` with the same keeper, no restart.
// Temporal is the stack's real one behind a TCP proxy of this test's own, which first drops every
// connection, then forwards.
import assert from 'node:assert/strict';
import net from 'node:net';
import path from 'node:path';
import { silentLogger } from '../../common/logger';
import { startKeeper, type RunningKeeper } from '../../keeper/server';
import { TEMPORAL_START_WAIT_MS } from '../../runs/connection';
import { cleanupKeeperFiles, initTestKeeper, startTestKeeper, type TestKeeper } from '../support/keeper';
import { stackEnv } from '../support/stack-env';
import { serviceRepo } from '../support/service-repo';
import { api, settled, startSouls, stopRunRig, tempDir, waitFor, type TestSoul } from '../runs/keeper';

/** A proxy to `target` that drops every connection (or, `hold`, accepts and never answers) until `forward()`. */
async function startProxy(
  target: string,
  mode: 'drop' | 'hold' = 'drop',
): Promise<{ addr: string; forward(): void; stop(): Promise<void> }> {
  const i = target.lastIndexOf(':');
  const host = target.slice(0, i).replace(/^\[|\]$/g, '');
  const port = Number(target.slice(i + 1));
  let forwarding = false;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    if (!forwarding) {
      if (mode === 'drop') client.destroy();
      return;
    }
    const upstream = net.connect(port, host);
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    client.pipe(upstream).pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = `127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  return {
    addr,
    forward() {
      forwarding = true;
    },
    async stop() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('a keeper started while Temporal is away (issue 45)', function () {
  this.timeout(240_000);
  let proxy: Awaited<ReturnType<typeof startProxy>>;
  let k: TestKeeper;
  let root: string;
  let souls: TestSoul[] = [];
  let repoUrl: string;
  let startedIn = 0;

  before(async () => {
    root = tempDir('temporal-away-');
    proxy = await startProxy(stackEnv().TEMPORAL_ADDRESS);
    repoUrl = serviceRepo({ fixture: 'motd', tags: ['v1'] }).url;
    const t0 = Date.now();
    k = await startTestKeeper({
      mutate: (doc) => {
        doc.temporal.address = proxy.addr;
      },
    });
    startedIn = Date.now() - t0;
  });
  after(async () => {
    await stopRunRig({ souls, k, root });
    await proxy?.stop();
  });

  const readyz = async () => {
    const r = await fetch(`${k.baseUrl}/readyz`);
    const { sources: _sources, ...body } = await r.json();
    return { status: r.status, body };
  };

  it('starts and is ready, naming Temporal as a degraded dependency', async () => {
    // The first attempt is dropped at once: the keeper does not wait out TEMPORAL_START_WAIT_MS.
    assert.ok(startedIn < 10_000, `started in ${startedIn} ms`);
    assert.deepEqual(await readyz(), {
      status: 200,
      body: {
        status: 'ready',
        checks: { database: 'up', cache: 'up', temporal: 'down', secretstore: 'up' },
        degraded: ['temporal'],
      },
    });
    const metrics = await (await fetch(`${k.metricsUrl}/metrics`)).text();
    assert.match(metrics, /keeper_dependency_up\{dependency="temporal",kid="[^"]+"\} 0/);
    assert.match(metrics, /keeper_dependency_up\{dependency="database",kid="[^"]+"\} 1/);
  });

  it('serves the registry, services, operators and onboarding without Temporal', async () => {
    const list = await api(k, 'GET', '/v1/souls');
    assert.equal(list.status, 200, JSON.stringify(list.body));
    const reg = await api(k, 'POST', '/v1/services', { name: 'motd', git: repoUrl, ref: 'v1' });
    assert.equal(reg.status, 201, JSON.stringify(reg.body));
    // A real soul registered, onboarded (its certificate signed by the store's PKI) and connected.
    souls = await startSouls(k, path.join(root, 'souls'), [['edge']]);
    const soul = await api(k, 'GET', `/v1/souls/${souls[0]!.sid}`);
    assert.equal(soul.body.status, 'connected');
    assert.equal((await api(k, 'GET', '/v1/archons')).status, 200);
  });

  it('refuses a run and an execution with 503 naming Temporal and the fix, recording nothing', async () => {
    const run = await api(k, 'POST', '/v1/incarnations', {
      name: 'away',
      service: 'motd',
      covens: ['edge'],
      input: { root: path.join(root, 'out'), message: 'one', package: 'git' },
    });
    assert.equal(run.status, 503, JSON.stringify(run.body));
    assert.equal(run.body.type, 'urn:keeper:problem:dependency-unavailable');
    assert.match(run.body.detail, /^the workflow engine \(Temporal\) is not answering, so nothing was started/);
    assert.match(run.body.detail, /retry once \/readyz shows "temporal": "up"/);
    assert.match(run.body.detail, /check temporal\.address/);
    assert.equal((await api(k, 'GET', '/v1/incarnations/away')).status, 404, 'no incarnation was recorded');
    const exec = await api(k, 'POST', '/v1/executions', {
      module: 'core.cmd.run',
      params: { argv: ['true'] },
      target: { covens: ['edge'] },
    });
    assert.equal(exec.status, 503, JSON.stringify(exec.body));
    assert.match(exec.body.detail, /Temporal/);
  });

  it('picks Temporal up once it answers, without a restart: a run then ends ready', async () => {
    proxy.forward();
    const t0 = Date.now();
    const up = await waitFor(
      'temporal up in /readyz',
      async () => {
        const r = await readyz();
        return r.body.checks.temporal === 'up' ? r : undefined;
      },
      60_000,
      200,
    );
    assert.deepEqual(up, {
      status: 200,
      body: {
        status: 'ready',
        checks: { database: 'up', cache: 'up', temporal: 'up', secretstore: 'up' },
        degraded: [],
      },
    });
    // The client connects before the workers are created: a run may be refused for a moment more.
    const run = await waitFor(
      'a run accepted',
      async () => {
        const r = await api(k, 'POST', '/v1/incarnations', {
          name: 'back',
          service: 'motd',
          covens: ['edge'],
          input: { root: path.join(root, 'out'), message: 'one', package: 'git' },
        });
        return r.status === 503 ? undefined : r;
      },
      30_000,
      250,
    );
    assert.equal(run.status, 202, JSON.stringify(run.body));
    console.log(`      temporal up in /readyz ${Date.now() - t0} ms after the proxy forwarded`);
    assert.equal((await settled(k, 'back', 120_000)).status, 'ready');
  });
});

describe('a keeper whose Temporal accepts connections and never answers (issue 45)', function () {
  this.timeout(120_000);
  let proxy: Awaited<ReturnType<typeof startProxy>>;
  let k: TestKeeper | undefined;

  before(async () => {
    proxy = await startProxy(stackEnv().TEMPORAL_ADDRESS, 'hold');
  });
  after(async () => {
    await k?.stop();
    await proxy?.stop();
  });

  it('answers 503 "starting" until every component has started, then starts without Temporal, ready and degraded', async () => {
    const files = await initTestKeeper({
      mutate: (doc) => {
        doc.temporal.address = proxy.addr;
      },
    });
    const url = `${files.baseUrl}/readyz`;
    const t0 = Date.now();
    let started: RunningKeeper | undefined;
    const starting = startKeeper(files.config, silentLogger).then((keeper) => {
      started = keeper;
      k = {
        ...files,
        keeper,
        async stop() {
          await keeper.stop();
          await cleanupKeeperFiles(files);
        },
      };
    });
    // The operator API listens before the Temporal client has given up: ready must not say so yet.
    const early = await waitFor(
      'the starting keeper to answer /readyz',
      async () => {
        try {
          const r = await fetch(url);
          return { status: r.status, body: (await r.json()) as { status: string } };
        } catch {
          return undefined; // not listening yet
        }
      },
      30_000,
      100,
    );
    assert.equal(started, undefined, 'asked while the keeper was still starting');
    assert.deepEqual([early.status, early.body.status], [503, 'starting']);
    await starting;
    const waited = Date.now() - t0;
    assert.ok(waited >= TEMPORAL_START_WAIT_MS, `started after ${waited} ms, having waited for Temporal`);
    const r = await fetch(url);
    const { sources: _sources, ...body } = await r.json();
    assert.deepEqual(
      { http: r.status, ...body },
      {
        http: 200,
        status: 'ready',
        checks: { database: 'up', cache: 'up', temporal: 'down', secretstore: 'up' },
        degraded: ['temporal'],
      },
    );
  });
});
