// Temporal behind mutual TLS (issue 13, item 6): a frontend that demands client certificates
// (test/support/temporal-mtls.ts: HAProxy in front of a dev server only it can reach). A workflow
// started on it without a client certificate, with one from another CA, or in plain text is
// refused at the handshake; the keeper with temporal.tls runs a real run through it (client and
// both workers), and the run's workflow lives on that frontend only.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Client, Connection, type TLSConfig } from '@temporalio/client';
import { startTestKeeper, type TestKeeper } from '../support/keeper';
import { connectStackTemporal } from '../support/temporal-client';
import { startTemporalMtls, type TemporalMtls } from '../support/temporal-mtls';
import { repoRoot } from '../support/repo';
import { api, gitRepoFrom, settled, startSouls, tempDir, type TestSoul } from './keeper';

describe('runs: Temporal behind mutual TLS', function () {
  this.timeout(240_000);
  let t: TemporalMtls;
  let k: TestKeeper;
  let root: string;
  let souls: TestSoul[] = [];

  before(async () => {
    t = await startTemporalMtls();
    root = tempDir('mtls-');
  });
  after(async () => {
    await Promise.all(souls.map((s) => s.run.kill()));
    await k?.stop();
    await t?.stop();
    fs.rmSync(root, { recursive: true, force: true });
  });

  async function startWorkflowWith(tls: TLSConfig | false): Promise<unknown> {
    let connection: Connection | undefined;
    try {
      connection = await Connection.connect({ address: t.address, tls, connectTimeout: '3s' });
      const client = new Client({ connection, namespace: 'default' });
      await client.workflow.start('incarnationRun', {
        workflowId: `intruder-${Date.now()}`,
        taskQueue: 'keeper',
        args: [{ applyId: 'x', incarnation: 'x', operation: 'create' }],
      });
      return undefined;
    } catch (err) {
      return err;
    } finally {
      await connection?.close().catch(() => undefined);
    }
  }

  it('refuses a workflow started without a client certificate, with a foreign one, or in plain text', async () => {
    const ca = fs.readFileSync(t.ca);
    const attempts: [string, TLSConfig | false][] = [
      ['no client certificate', { serverRootCACertificate: ca, serverNameOverride: t.serverName }],
      [
        'a certificate from another CA',
        {
          serverRootCACertificate: ca,
          serverNameOverride: t.serverName,
          clientCertPair: { crt: fs.readFileSync(t.rogue.cert), key: fs.readFileSync(t.rogue.key) },
        },
      ],
      ['plain text', false],
    ];
    for (const [what, tls] of attempts) {
      const err = await startWorkflowWith(tls);
      assert.ok(err instanceof Error, `${what}: the frontend must refuse`);
    }
    // The dev server is reachable only through the bridge's socket: 0600 in a 0700 directory.
    assert.equal(fs.statSync(path.join(t.dir, 'temporal.sock')).mode & 0o777, 0o600);
    assert.equal(fs.statSync(t.dir).mode & 0o777, 0o700);
    // The same frontend admits the fixture's client certificate: the refusals above were the certificate's doing.
    assert.equal(
      await startWorkflowWith({
        serverRootCACertificate: ca,
        serverNameOverride: t.serverName,
        clientCertPair: { crt: fs.readFileSync(t.client.cert), key: fs.readFileSync(t.client.key) },
      }),
      undefined,
    );
  });

  it('runs a real run through it with temporal.tls: client and workers present the keeper certificate', async () => {
    const url = gitRepoFrom(
      path.join(repoRoot(), 'test', 'fixtures', 'services', 'note'),
      path.join(root, 'note.git'),
      'v1',
    );
    k = await startTestKeeper({
      mutate: (doc) => {
        doc.temporal = {
          ...doc.temporal,
          address: t.address,
          tls: { ca: t.ca, cert: t.client.cert, key: t.client.key, server_name: t.serverName },
        };
      },
    });
    souls = await startSouls(k, path.join(root, 'souls'), [['web']]);
    assert.equal((await api(k, 'POST', '/v1/services', { name: 'mtls', git: url, ref: 'v1' })).status, 201);
    const r = await api(k, 'POST', '/v1/incarnations', {
      name: 'mtls-web',
      service: 'mtls',
      covens: ['web'],
      input: { root, greeting: 'through-tls', file: 'mark' },
    });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    const inc = await settled(k, 'mtls-web');
    assert.equal(inc.status, 'ready', JSON.stringify(inc.last_run));
    assert.equal(fs.readFileSync(path.join(root, souls[0].sid, 'mark'), 'utf8'), 'through-tls\n');

    // The run's workflow is on the mTLS frontend, not on the shared stack's.
    const tls = {
      serverRootCACertificate: fs.readFileSync(t.ca),
      serverNameOverride: t.serverName,
      clientCertPair: { crt: fs.readFileSync(t.client.cert), key: fs.readFileSync(t.client.key) },
    };
    const secured = await Connection.connect({ address: t.address, tls });
    const stack = await connectStackTemporal();
    try {
      // The incarnation is `ready` once the commit activity ran; the workflow completes right after.
      const handle = new Client({ connection: secured }).workflow.getHandle(r.body.apply_id);
      await handle.result();
      const d = await handle.describe();
      assert.equal(d.status.name, 'COMPLETED');
      await assert.rejects(
        new Client({ connection: stack }).workflow.getHandle(r.body.apply_id).describe(),
        /not found/i,
      );
    } finally {
      await secured.close();
      await stack.close();
    }
  });
});
