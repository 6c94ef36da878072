// The production rehearsal (issue 33, docs/production.md; `make test-prod`, not `make test`):
// scripts/prod-rehearsal.sh brings up the Temporal server (PostgreSQL, mTLS frontend, namespace
// `keeper`), the secrets store in server mode (initialised, unsealed, provisioned) and two keepers;
// then what an operator would try on it: a run with real souls, one keeper SIGKILLed mid-run, a
// Temporal frontend outage, the store sealed and unsealed, a namespace without search attributes.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { NativeConnection } from '@temporalio/worker';
import { msToTs } from '@temporalio/common/lib/time';
import { createTestDatabase } from '../support/database';
import { repoRoot } from '../support/repo';
import { stackEnv } from '../support/stack-env';
import { api, waitFor } from '../runs/keeper';
import { midDispatch, settleAndCheck, startRig, type Rig } from '../faults/rig';

const SCRIPT = path.join(repoRoot(), 'scripts', 'prod-rehearsal.sh');
const STATE = process.env.KEEPER_PROD_DIR ?? path.join(repoRoot(), '.prod');

function rehearsal(...args: string[]): string {
  return execFileSync('bash', [SCRIPT, ...args], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 1_500_000,
  });
}

function envOf(file: string): Record<string, string> {
  return Object.fromEntries(
    fs
      .readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l.includes('='))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
}

const rootToken = () =>
  JSON.parse(fs.readFileSync(path.join(STATE, 'store', 'init.json'), 'utf8')).root_token as string;

async function readyz(baseUrl: string): Promise<{ status: number; checks: Record<string, string> }> {
  try {
    const r = await fetch(`${baseUrl}/readyz`, { signal: AbortSignal.timeout(10_000) });
    return { status: r.status, checks: ((await r.json()) as { checks: Record<string, string> }).checks };
  } catch {
    return { status: 0, checks: {} };
  }
}

const ALL_UP = { database: 'up', cache: 'up', temporal: 'up', secretstore: 'up' };

describe('production rehearsal: Temporal server, sealed secrets store, two keepers (issue 33)', function () {
  this.timeout(1_800_000);
  let env: Record<string, string>;
  const keepers = () => [env.KEEPER_A, env.KEEPER_B];

  before(() => {
    const t0 = Date.now();
    rehearsal('up');
    console.log(`      rehearsal up in ${Math.round((Date.now() - t0) / 1000)} s`);
    env = envOf(path.join(STATE, 'env'));
  });

  it('runs two keepers ready on it, with the search attributes registered by keeper temporal-setup', async () => {
    for (const k of keepers()) assert.deepEqual(await readyz(k), { status: 200, checks: ALL_UP });
    const again = execFileSync(
      process.execPath,
      [
        path.join(repoRoot(), 'bin', 'keeper'),
        'temporal-setup',
        `--config=${path.join(STATE, 'keeper-a', 'keeper.yml')}`,
      ],
      { encoding: 'utf8' },
    );
    assert.equal(again, 'namespace keeper exists\nsearch attributes already registered\n');
    assert.match(
      rehearsal('status'),
      /temporal\s+up .*\nsecretstore\s+up .*\nkeeper prod-a\s+ready .*\nkeeper prod-b\s+ready/,
    );
  });

  it('refuses to start a keeper on a namespace without the search attributes, naming them and the fix', async () => {
    const tlsDir = env.TEMPORAL_TLS_DIR;
    const connection = await NativeConnection.connect({
      address: env.TEMPORAL_ADDRESS,
      tls: {
        serverRootCACertificate: fs.readFileSync(path.join(tlsDir, 'ca.pem')),
        clientCertPair: {
          crt: fs.readFileSync(path.join(tlsDir, 'operator.crt')),
          key: fs.readFileSync(path.join(tlsDir, 'operator.key')),
        },
        serverNameOverride: env.TEMPORAL_TLS_NAME,
      },
    });
    const namespace = `bare-${randomBytes(3).toString('hex')}`;
    try {
      await connection.workflowService.registerNamespace({
        namespace,
        workflowExecutionRetentionPeriod: msToTs(86_400_000),
      });
    } finally {
      await connection.close();
    }
    const config = fs
      .readFileSync(path.join(STATE, 'keeper-a', 'keeper.yml'), 'utf8')
      .replace(/^kid: .*$/m, `kid: bare-${namespace}`)
      .replace(/namespace: keeper$/m, `namespace: ${namespace}`)
      .replace(/127\.0\.0\.1:8380/, '127.0.0.1:8390')
      .replace(/127\.0\.0\.1:9380/, '127.0.0.1:9390')
      .replace(/127\.0\.0\.1:9480/, '127.0.0.1:9490')
      .replace(/127\.0\.0\.1:9481/, '127.0.0.1:9491');
    const file = path.join(STATE, `keeper-${namespace}.yml`);
    fs.writeFileSync(file, config);
    try {
      // The namespace reaches every frontend's cache within seconds; until then it "does not exist".
      const r = await waitFor(
        'the keeper to refuse for the search attributes',
        async () => {
          const run = spawnSync(process.execPath, [path.join(repoRoot(), 'bin', 'keeper'), 'run', `--config=${file}`], {
            encoding: 'utf8',
            timeout: 120_000,
          });
          return run.stderr.includes('search attributes') ? run : undefined;
        },
        120_000,
        1000,
      );
      assert.equal(r.status, 1);
      assert.match(
        r.stderr,
        new RegExp(
          `the Temporal namespace ${namespace} lacks the keeper's search attributes KeeperIncarnation, KeeperOperation, KeeperServiceRef, KeeperService \\(type Keyword\\); register them once per namespace with: keeper temporal-setup --config=<keeper.yml>`,
        ),
      );
      const setup = execFileSync(
        process.execPath,
        [path.join(repoRoot(), 'bin', 'keeper'), 'temporal-setup', `--config=${file}`],
        {
          encoding: 'utf8',
        },
      );
      assert.equal(
        setup,
        `namespace ${namespace} exists\nsearch attributes registered: KeeperIncarnation, KeeperOperation, KeeperServiceRef, KeeperService (Keyword)\n`,
      );
    } finally {
      fs.rmSync(file, { force: true });
    }
  });

  describe('a run on two keepers with real souls, one keeper SIGKILLed mid-run', () => {
    let rig: Rig;
    let secretName = '';
    before(async () => {
      // The keepers' secret (DSN, cache password, signing key) in the rehearsal's own store, where
      // its keeper AppRole may read it (below secret/keeper/).
      const db = await createTestDatabase('prod');
      secretName = `keeper/t-${randomBytes(5).toString('hex')}`;
      const res = await fetch(`${env.SECRETSTORE_ADDR}/v1/secret/data/${secretName}`, {
        method: 'POST',
        headers: { 'X-Vault-Token': rootToken(), 'Content-Type': 'application/json' },
        body: JSON.stringify({
          data: { dsn: db.dsn, password: stackEnv().REDIS_PASSWORD, signing_key: randomBytes(32).toString('base64') },
        }),
      });
      assert.equal(res.status, 200, await res.text());
      const store = env.SECRETSTORE_DIR;
      const tlsDir = env.TEMPORAL_TLS_DIR;
      rig = await startRig({
        db,
        secretName,
        second: true,
        covens: [['web'], ['web'], ['web'], ['web']],
        steps: 4,
        soulCa: path.join(store, 'tls', 'ca.pem'),
        mutate: (doc) => {
          doc.temporal = {
            ...doc.temporal,
            address: env.TEMPORAL_ADDRESS,
            namespace: 'keeper',
            tls: {
              ca: path.join(tlsDir, 'ca.pem'),
              cert: path.join(tlsDir, 'keeper.crt'),
              key: path.join(tlsDir, 'keeper.key'),
              server_name: env.TEMPORAL_TLS_NAME,
            },
          };
          doc.secretstore = {
            ...doc.secretstore,
            addr: env.SECRETSTORE_ADDR,
            auth: { method: 'approle', role_id: 'keeper', secret_id_file: path.join(store, 'approle-secret-id') },
            scenario_auth: {
              method: 'approle',
              role_id: 'keeper-scenario',
              secret_id_file: path.join(store, 'approle-scenario-secret-id'),
            },
          };
          for (const l of ['bootstrap', 'event_stream'] as const) {
            doc.listen.grpc[l].tls.cert = path.join(store, 'tls', 'keeper.crt');
            doc.listen.grpc[l].tls.key = path.join(store, 'tls', 'keeper.key');
            if (l === 'event_stream') doc.listen.grpc[l].tls.ca = path.join(store, 'tls', 'ca.pem');
          }
        },
      });
    });
    after(async () => {
      await rig?.stop();
      await fetch(`${env.SECRETSTORE_ADDR}/v1/secret/metadata/${secretName}`, {
        method: 'DELETE',
        headers: { 'X-Vault-Token': rootToken() },
      }).catch(() => undefined);
    });

    it('ends the first run ready with every step once', async () => {
      const applyId = await rig.create('first');
      assert.ok(applyId);
      assert.equal(await settleAndCheck(rig, 'first'), 'ready');
    });

    it('ends the run ready after keeper A is SIGKILLed mid-run, every step once, and prints the time', async () => {
      const b = rig.b!;
      const applyId = await rig.create('failover');
      await midDispatch(rig, applyId);
      rig.keeper.child.kill('SIGKILL');
      await rig.keeper.exited;
      const t0 = Date.now();
      rig.k.baseUrl = b.access.baseUrl;
      await Promise.all(
        rig.souls.map((s) =>
          waitFor(
            `${s.sid} on keeper B`,
            async () => (await api(b.access, 'GET', `/v1/souls/${s.sid}`)).body.connected_kid === b.access.config.kid,
            120_000,
            100,
          ),
        ),
      );
      const moved = Date.now() - t0;
      const first = await settleAndCheck(rig, 'failover');
      console.log(
        `      ${rig.souls.length} souls on keeper B ${moved} ms after A was killed; the run ended ${first} ${Date.now() - t0} ms after the kill`,
      );
      assert.equal(first, 'ready');
      const runs = (await rig.check()).runs.filter((r) => r.status === 'succeeded');
      assert.equal(runs.length, 2, 'both runs committed once');
    });
  });

  it('says temporal is down in /readyz while the frontend is stopped, and recovers by itself', async () => {
    rehearsal('temporal-stop');
    const t0 = Date.now();
    try {
      for (const k of keepers()) {
        const down = await waitFor(
          'temporal down in /readyz',
          async () => {
            const r = await readyz(k);
            return r.status === 503 ? r : undefined;
          },
          60_000,
          250,
        );
        assert.deepEqual(down, { status: 503, checks: { ...ALL_UP, temporal: 'down' } });
      }
    } finally {
      rehearsal('temporal-start');
    }
    for (const k of keepers())
      await waitFor('the keeper ready again', async () => (await readyz(k)).status === 200, 300_000, 500);
    console.log(
      `      Temporal frontend stopped and started: both keepers ready again ${Date.now() - t0} ms after the stop`,
    );
  });

  it('says secretstore is down in /readyz while the store is sealed, and recovers once it is unsealed', async () => {
    rehearsal('seal');
    const t0 = Date.now();
    try {
      // `status` exits 1 while a part is down; it names the sealed store.
      const status = spawnSync('bash', [SCRIPT, 'status'], { encoding: 'utf8' });
      assert.equal(status.status, 1);
      assert.match(status.stdout, /secretstore\s+sealed/);
      for (const k of keepers()) {
        const down = await waitFor(
          'secretstore down in /readyz',
          async () => {
            const r = await readyz(k);
            return r.status === 503 ? r : undefined;
          },
          60_000,
          250,
        );
        assert.deepEqual(down, { status: 503, checks: { ...ALL_UP, secretstore: 'down' } });
      }
    } finally {
      rehearsal('unseal');
    }
    for (const k of keepers()) {
      const r = await waitFor(
        'the keeper ready again',
        async () => {
          const x = await readyz(k);
          return x.status === 200 ? x : undefined;
        },
        60_000,
        250,
      );
      assert.deepEqual(r, { status: 200, checks: ALL_UP });
    }
    console.log(`      store sealed, then unsealed: both keepers ready again ${Date.now() - t0} ms after the seal`);
  });
});
