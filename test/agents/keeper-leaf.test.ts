// The keeper's own leaf renewed under connected souls: a keeper started with a 12-second server
// certificate and secretstore.server_leaf renews it from the PKI's server role at two thirds of its
// lifetime, serves each new one on both gRPC listeners without a restart, writes it to its files,
// and drops no stream: the souls connected before keep their one session throughout, and a host
// onboarded afterwards trusts the renewed certificate.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { startTestKeeper, type TestKeeper } from '../support/keeper';
import { deleteRole, issue, keeperToken, putRole, roleName, serverRoleParams, useToken } from '../support/pki';
import { stackFile } from '../support/stack-env';
import {
  endpointOf,
  port,
  register,
  soulInit,
  soulRun,
  soulStatus,
  uniqueSid,
  waitFor,
  waitForStatus,
  writeSoulConfig,
  type RunningSoul,
} from './harness';

const NAMES = { common_name: 'keeper.keeper.test', alt_names: 'localhost', ip_sans: '127.0.0.1' };

/** The serial of the certificate a listener serves to a new handshake. */
function servedSerial(addr: string, client?: { key: Buffer; cert: Buffer }): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect(
      {
        host: '127.0.0.1',
        port: port(addr),
        servername: 'localhost',
        ca: fs.readFileSync(stackFile('tls', 'ca.pem')),
        ALPNProtocols: ['h2'],
        ...client,
      },
      () => {
        const serial = socket.getPeerCertificate().serialNumber;
        socket.end();
        resolve(serial);
      },
    );
    socket.on('error', reject);
  });
}

describe("the keeper's own certificate renewed under connected souls (real keeper, real PKI)", function () {
  this.timeout(120_000);
  let k: TestKeeper;
  let dir: string;
  let role: string;
  const running: RunningSoul[] = [];

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keeper-leaf-'));
    role = roleName('server');
    await putRole(role, serverRoleParams({ max_ttl: '10m', ttl: '12s' }));
    const first = await issue(role, { ...NAMES, ttl: '12s' });
    fs.writeFileSync(path.join(dir, 'keeper.crt'), first.certificate + '\n');
    fs.writeFileSync(path.join(dir, 'keeper.key'), first.private_key + '\n', { mode: 0o600 });
    const token = await keeperToken();
    k = await startTestKeeper({
      mutate: (doc) => {
        useToken(doc, token);
        for (const l of [doc.listen.grpc.bootstrap, doc.listen.grpc.event_stream]) {
          l.tls.cert = path.join(dir, 'keeper.crt');
          l.tls.key = path.join(dir, 'keeper.key');
        }
        doc.secretstore.server_leaf = {
          pki_role: role,
          common_name: NAMES.common_name,
          alt_names: ['localhost'],
          ip_sans: ['127.0.0.1'],
          ttl: '12s',
        };
      },
    });
  });
  after(async () => {
    await Promise.all(running.map((r) => r.kill()));
    await k?.stop();
    await deleteRole(role);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('renews twice with two souls connected: served on both listeners, written to its files, no stream dropped', async () => {
    const souls = await Promise.all(
      [uniqueSid('leaf-a'), uniqueSid('leaf-b')].map(async (sid) => {
        const config = writeSoulConfig(path.join(dir, sid), sid, [endpointOf(k)]);
        assert.equal((await soulInit(sid, config, await register(k, sid))).code, 0);
        const run = soulRun(sid, config);
        running.push(run);
        await waitForStatus(k, sid, 'connected', 20_000, run);
        return { sid, run, seed: path.join(dir, sid, 'seed'), epoch: (await soulStatus(k, sid)).connected_kid };
      }),
    );
    const text = async () => (await fetch(`${k.metricsUrl}/metrics`)).text();
    const accepted = (t: string) =>
      Number(/keeper_handshakes_total\{listener="event_stream",outcome="accepted"[^}]*\} (\d+)/.exec(t)?.[1] ?? 0);
    const acceptedBefore = accepted(await text());

    const bootstrap = k.config.listen.grpc.bootstrap.addr;
    const stream = k.config.listen.grpc.event_stream.addr;
    const client = {
      key: fs.readFileSync(path.join(souls[0]!.seed, 'key.pem')),
      cert: fs.readFileSync(path.join(souls[0]!.seed, 'cert.pem')),
    };
    const seen = new Set<string>([await servedSerial(bootstrap)]);
    await waitFor(
      'two renewals of the keeper certificate',
      async () => {
        const [b, s] = await Promise.all([servedSerial(bootstrap), servedSerial(stream, client)]);
        assert.equal(b, s, 'both listeners serve the same certificate');
        seen.add(b);
        return seen.size >= 3;
      },
      45_000,
      500,
    );

    const t = await text();
    assert.ok(
      Number(/keeper_server_certificate_renewals_total\{outcome="renewed"[^}]*\} (\d+)/.exec(t)?.[1] ?? 0) >= 2,
    );
    assert.equal(accepted(t), acceptedBefore, 'no soul had to connect again');
    const onDisk = new X509Certificate(fs.readFileSync(path.join(dir, 'keeper.crt')));
    assert.ok(seen.has(onDisk.serialNumber), 'the renewed certificate was written to tls.cert');
    assert.ok(
      onDisk.checkPrivateKey(
        await import('node:crypto').then((c) => c.createPrivateKey(fs.readFileSync(path.join(dir, 'keeper.key')))),
      ),
    );
    for (const s of souls) {
      assert.equal(s.run.child.exitCode, null);
      assert.doesNotMatch(s.run.log.stderr, /"stream lost"|reconnecting/, `${s.sid} kept its stream`);
      assert.equal((await soulStatus(k, s.sid)).status, 'connected');
    }

    // A host onboarded now checks the renewed certificate against keeper.tls.ca and trusts it.
    const late = uniqueSid('leaf-late');
    const config = writeSoulConfig(path.join(dir, late), late, [endpointOf(k)]);
    const init = await soulInit(late, config, await register(k, late));
    assert.equal(init.code, 0, init.stderr);
  });
});
