// The production rehearsal (issue 33, docs/production.md; `make test-prod`, not `make test`):
// scripts/prod-rehearsal.sh brings up the Temporal server (PostgreSQL, mTLS frontend, namespace
// `keeper`) and the secrets store in server mode (initialised, unsealed, provisioned); the keepers
// are the .deb's, installed in two Debian roots booted with systemd and started by their unit
// (packaged-keepers.ts). Then what an operator would try on it: a namespace without the search
// attributes, and the outage table with real souls (outages.ts): PostgreSQL, Redis, the store
// sealed, a Temporal frontend restart, one keeper SIGKILLed, each timed.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { NativeConnection } from '@temporalio/worker';
import { msToTs } from '@temporalio/common/lib/time';
import { repoRoot } from '../support/repo';
import { api, waitFor } from '../runs/keeper';
import type { SystemdRoot } from '../modules/systemd-root';
import { bootRoot, buildKeeperDeb, installKeeper, type PackagedKeeper } from './packaged-keepers';
import { ALL_UP, readyz, seenDown, slowService, startFleet, type Fleet } from './outages';

const SCRIPT = path.join(repoRoot(), 'scripts', 'prod-rehearsal.sh');
const STATE = process.env.KEEPER_PROD_DIR ?? path.join(repoRoot(), '.prod');

function rehearsal(...args: string[]): string {
  return execFileSync('bash', [SCRIPT, ...args], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 1_500_000,
    // `up` leaves the keepers' ports to the packaged keepers.
    env: { ...process.env, KEEPER_PROD_KEEPERS: 'packaged' },
  });
}

/** Whether the rehearsal's Temporal server and store were already running (someone's own rehearsal). */
function partsUp(): boolean {
  const r = spawnSync('bash', [SCRIPT, 'status'], { encoding: 'utf8', env: process.env });
  return /^temporal\s+up/m.test(r.stdout) && /^secretstore\s+up/m.test(r.stdout);
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

describe('production rehearsal: Temporal server, sealed secrets store, two keepers from the .deb (issue 33)', function () {
  this.timeout(1_800_000);
  let env: Record<string, string>;
  const keepers = () => [env.KEEPER_A!, env.KEEPER_B!];
  const roots: SystemdRoot[] = [];
  const packaged: PackagedKeeper[] = [];
  // The run's service: slow steps, a name of this run's own (keeper_prod outlives a test run).
  const serviceName = `slowfiles-${randomBytes(3).toString('hex')}`;
  const svc = slowService(serviceName);

  // What the suite starts it stops (the data stays in .prod/, `up` resumes it): a test run leaves no
  // server behind on the rehearsal's ports, where another checkout's run would collide with it.
  let startedHere = false;

  before(async () => {
    const t0 = Date.now();
    startedHere = !partsUp();
    rehearsal('up');
    env = envOf(path.join(STATE, 'env'));
    // The package builds while the two roots unpack and boot.
    const [deb] = await Promise.all([
      buildKeeperDeb(),
      ...(['keeper-a', 'keeper-b'] as const).map(async (h) => {
        roots.push(await bootRoot(`prod-${h}.keeper.test`));
      }),
    ]);
    const admin = fs.readFileSync(path.join(STATE, 'admin.jwt'), 'utf8').trim();
    roots.sort((x, y) => (x.dir < y.dir ? -1 : 1));
    packaged.push(await installKeeper(roots[0]!, deb, STATE, 'a', admin, {}));
    packaged.push(await installKeeper(roots[1]!, deb, STATE, 'b', admin, {}));
    console.log(`      rehearsal up, two packaged keepers started, in ${Math.round((Date.now() - t0) / 1000)} s`);
  });
  after(async () => {
    for (const r of roots) await r.stop().catch(() => undefined);
    fs.rmSync(svc.src, { recursive: true, force: true });
    if (startedHere) rehearsal('down');
  });

  it('runs two packaged keepers ready on it, with the search attributes registered by keeper temporal-setup', async () => {
    for (const k of keepers()) assert.deepEqual(await readyz(k), { status: 200, checks: ALL_UP, degraded: [] });
    for (const p of packaged) {
      assert.equal((await p.root.run(['systemctl', 'is-active', 'keeper'])).stdout.trim(), 'active');
      // The modes the spec requires, as installed: the secret_ids the keeper's own 0400.
      assert.equal(
        await p.root.ok([
          'stat',
          '-c',
          '%n %U:%G %a',
          '/etc/keeper/approle-secret-id',
          '/etc/keeper/approle-scenario-secret-id',
          '/etc/keeper/tls/temporal-client.key',
        ]),
        '/etc/keeper/approle-secret-id keeper:keeper 400\n/etc/keeper/approle-scenario-secret-id keeper:keeper 400\n/etc/keeper/tls/temporal-client.key root:keeper 640\n',
      );
      const metrics = await (await fetch(`http://${p.access.config.listen.metrics.addr}/metrics`)).text();
      assert.match(metrics, new RegExp(`keeper_build_info\\{[^}]*kid="${p.kid}"`));
    }
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

  describe('the outage table on the packaged keepers, a run with 4 real souls across each fault', () => {
    let fleet: Fleet;
    const access = () => packaged.map((p) => p.access);
    before(async () => {
      const name = serviceName;
      // Registered through keeper A; the render may run on either keeper (one task queue), so the
      // repository is at the same path in both roots (services.git.file_shared).
      const at = `/srv/git/${name}.git`;
      for (const p of packaged) {
        fs.cpSync(svc.repo, p.root.path(at), { recursive: true });
        await p.root.ok(['chown', '-R', 'keeper:keeper', at]);
      }
      fleet = await startFleet(access(), path.join(env.SECRETSTORE_DIR, 'tls', 'ca.pem'), name, `file://${at}`);
    });
    after(async () => {
      await fleet?.stop();
      if (fleet?.rows.length) {
        const sec = (ms: number, w: number) => `${(ms / 1000).toFixed(1)} s`.padStart(w);
        console.log('      fault                           back   /readyz all up   run ended   first status');
        for (const r of fleet.rows)
          console.log(
            `      ${r.fault.padEnd(26)}${sec(r.healedMs, 9)}${sec(r.readyMs, 17)}${sec(r.endMs, 12)}   ${r.first}${r.why ? ` ${r.why}` : ''}`,
          );
      }
    });

    it('souls connect to keeper A, their first by priority, and a run ends ready', async () => {
      for (const s of fleet.souls) {
        const r = await api(packaged[0]!.access, 'GET', `/v1/souls/${s.sid}`);
        assert.equal(r.body.connected_kid, 'prod-a');
      }
      await fleet.row('none', async () => undefined);
    });

    it('PostgreSQL: keeper_prod refuses connections and its sessions are ended for 5 s', async () => {
      await fleet.row('PostgreSQL blocked 5 s', async () => {
        rehearsal('pg-block');
        try {
          await seenDown(access(), 'database');
          await new Promise((r) => setTimeout(r, 5000));
        } finally {
          rehearsal('pg-unblock');
        }
      });
    });

    it('Redis: the keepers’ connections killed (CLIENT KILL by their ports)', async () => {
      await fleet.row('redis', async () => {
        const killed = Number(rehearsal('redis-kill', ...packaged.map((p) => String(p.hostPid()))).trim());
        assert.ok(killed >= 2, `${killed} connections killed`);
      });
    });

    it('the secrets store sealed: both keepers stay ready (store degraded) and serve the API; unsealed once /readyz says so', async () => {
      await fleet.row('store sealed', async () => {
        rehearsal('seal');
        try {
          const status = spawnSync('bash', [SCRIPT, 'status'], { encoding: 'utf8' });
          assert.equal(status.status, 1);
          assert.match(status.stdout, /secretstore\s+sealed/);
          for (const k of keepers()) {
            const down = await waitFor(
              'secretstore down in /readyz',
              async () => {
                const r = await readyz(k);
                return r.checks.secretstore === 'down' ? r : undefined;
              },
              60_000,
              100,
            );
            // The spec: ready while the database and the cache answer; the store is reported (issue 45).
            assert.deepEqual(down, {
              status: 200,
              checks: { ...ALL_UP, secretstore: 'down' },
              degraded: ['secretstore'],
            });
          }
          // The API keeps serving what needs no secret on both keepers.
          for (const p of packaged) {
            const souls = await api(p.access, 'GET', '/v1/souls');
            assert.equal(souls.status, 200, JSON.stringify(souls.body));
          }
        } finally {
          rehearsal('unseal');
        }
      });
    });

    it('the Temporal frontend stopped: both keepers stay ready (temporal degraded), then started once /readyz says so', async () => {
      await fleet.row('Temporal restart', async () => {
        rehearsal('temporal-stop');
        try {
          for (const k of keepers()) {
            const down = await waitFor(
              'temporal down in /readyz',
              async () => {
                const r = await readyz(k);
                return r.checks.temporal === 'down' ? r : undefined;
              },
              60_000,
              100,
            );
            assert.deepEqual(down, { status: 200, checks: { ...ALL_UP, temporal: 'down' }, degraded: ['temporal'] });
          }
        } finally {
          rehearsal('temporal-start');
        }
      });
    });

    it('keeper A SIGKILLed: the souls move to B, its unit restarts A, the run ends ready', async () => {
      const a = packaged[0]!;
      const b = packaged[1]!;
      let moved = 0;
      await fleet.row('keeper A SIGKILL', async () => {
        const t0 = Date.now();
        // From this machine: systemctl kill inside the root cannot signal the unit's cgroup here.
        process.kill(a.hostPid(), 'SIGKILL');
        await Promise.all(
          fleet.souls.map((s) =>
            waitFor(
              `${s.sid} on keeper B`,
              async () => (await api(b.access, 'GET', `/v1/souls/${s.sid}`)).body.connected_kid === 'prod-b',
              120_000,
              100,
            ),
          ),
        );
        moved = Date.now() - t0;
      });
      console.log(`      ${fleet.souls.length} souls on keeper B ${moved} ms after A was killed`);
      // The unit's Restart=on-failure brought A back. Its ExecStartPost (wait-ready.js) polls /readyz,
      // so the unit turns `active` a moment after A's /readyz first answers 200, which the row above
      // waited for: when the run ends quickly, the unit may still be `activating` here.
      await waitFor(
        "keeper A's unit active again",
        async () => (await a.root.run(['systemctl', 'is-active', 'keeper'])).stdout.trim() === 'active',
        60_000,
        200,
      );
      assert.ok(Number((await a.root.ok(['systemctl', 'show', '-p', 'NRestarts', '--value', 'keeper'])).trim()) >= 1);
    });
  });
});
