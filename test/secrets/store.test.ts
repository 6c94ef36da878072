// Least privilege at the store (issue 28), on the real store, KV v2 (`secret/`) and KV v1 (`kv1/`).
// The scenario role as scripts/provision-secretstore.js provisions it on the stack (`keeper-scenario`)
// is asked directly over HTTP with its own token, no keeper code in between: the store itself
// refuses it the keeper's own secrets (also through `..` and percent-encoded paths), lets it read
// below the scenario prefix, and write and delete only below its `incarnations/`. Then the keeper's
// client for that role (secrets/scenario.ts) refuses the same paths by its own rule first.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { SecretStore, connectSecretStore } from '../../secrets/client';
import { SecretStoreError } from '../../secrets/errors';
import { ScenarioSecrets } from '../../secrets/scenario';
import { SCENARIO_AUTH, appRoleToken, deleteSecret, putSecret, secretStoreCall } from '../support/secretstore';
import { stackEnv, stackFile } from '../support/stack-env';

/** One request exactly as written: the path is sent byte for byte (fetch would fold `..` itself). */
function raw(
  method: string,
  p: string,
  token: string,
  body?: unknown,
): Promise<{ status: number; text: string; location?: string }> {
  const url = new URL(stackEnv().SECRETSTORE_ADDR);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        method,
        path: p,
        headers: { 'X-Vault-Token': token, 'Content-Type': 'application/json' },
      },
      (res) => {
        let text = '';
        res.on('data', (d) => {
          text += d;
        });
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            text,
            ...(res.headers.location ? { location: res.headers.location } : {}),
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

describe("secrets store: the scenario role reaches only the scenario prefix, by the store's own policy", function () {
  this.timeout(60_000);
  const id = randomBytes(4).toString('hex');
  // The keeper's own secrets live at secret/keeper (the stack's) and beside it (a test keeper's).
  const OWN = `keeper/t28-${id}`;
  const CANARY = `own-signing-key-${randomBytes(12).toString('hex')}`;
  let scenarioToken: string;
  let keeperToken: string;

  before(async () => {
    await putSecret('secret', OWN, { signing_key: CANARY });
    await putSecret('kv1', OWN, { signing_key: CANARY });
    scenarioToken = await appRoleToken('keeper-scenario', stackFile('approle-scenario-secret-id'));
    keeperToken = await appRoleToken('keeper', stackFile('approle-secret-id'));
  });
  after(async () => {
    for (const m of ['secret', 'kv1'] as const) {
      for (const name of [
        OWN,
        `keeper/services/t28-${id}/db`,
        `keeper/services/incarnations/t28-${id}/runs/r1`,
        `keeper/services/incarnations/t28-${id}/runs/r2`,
      ]) {
        await deleteSecret(m, name).catch(() => undefined);
      }
    }
  });

  it("refuses the scenario token the keeper's own secrets (403 from the store), where the keeper's token reads them", async () => {
    for (const p of [
      '/v1/secret/data/keeper',
      `/v1/secret/data/${OWN}`,
      '/v1/secret/metadata/keeper',
      `/v1/kv1/${OWN}`,
      '/v1/kv1/keeper',
    ]) {
      const r = await raw('GET', p, scenarioToken);
      assert.equal(r.status, 403, `${p}: ${r.status}`);
      assert.ok(!r.text.includes(CANARY));
    }
    // The same paths exist and are the keeper's: its own token reads them.
    const own = await raw('GET', `/v1/secret/data/${OWN}`, keeperToken);
    assert.equal(own.status, 200);
    assert.equal(JSON.parse(own.text).data.data.signing_key, CANARY);
    assert.equal((await raw('GET', '/v1/secret/data/keeper', keeperToken)).status, 200);
  });

  it("refuses it the keeper's secrets through the review's path tricks (`..`, `%2e%2e`, `//`), whatever the store makes of them", async () => {
    const tricks = [
      '/v1/secret/data/keeper/services/../../keeper',
      `/v1/secret/data/keeper/services/../t28-${id}`,
      '/v1/secret/data/keeper/services/%2e%2e/%2e%2e/keeper',
      `/v1/secret/data/keeper/services/%2E%2E/t28-${id}`,
      '/v1/secret/data/keeper/services/..%2f..%2fkeeper',
      `/v1/secret/data/keeper/services//../t28-${id}`,
      `/v1/kv1/keeper/services/../t28-${id}`,
      `/v1/kv1/keeper/services/%2e%2e/t28-${id}`,
    ];
    for (const p of tricks) {
      // The store folds each of these into the keeper's own path (a redirect, followed here with
      // the same token, as a client would): there its policy answers 403.
      let r = await raw('GET', p, scenarioToken);
      let at = p;
      for (let hops = 0; r.status >= 300 && r.status < 400 && r.location && hops < 3; hops++) {
        at = new URL(r.location, stackEnv().SECRETSTORE_ADDR).pathname;
        r = await raw('GET', at, scenarioToken);
      }
      assert.equal(r.status, 403, `${p} (as ${at}): ${r.status}`);
      assert.match(at, /^\/v1\/(secret\/data|kv1)\/keeper(\/t28-|$)/, `${p} ended at ${at}`);
      assert.ok(!r.text.includes(CANARY), `${p} returned the keeper's secret`);
    }
  });

  for (const mount of ['secret', 'kv1'] as const) {
    const v2 = mount === 'secret';
    const data = (rest: string) => (v2 ? `/v1/secret/data/${rest}` : `/v1/kv1/${rest}`);
    const body = (fields: Record<string, string>) => (v2 ? { data: fields } : fields);

    it(`${mount}/ (KV ${v2 ? 'v2' : 'v1'}): reads below the prefix; writes, lists and deletes below incarnations/ only`, async () => {
      await putSecret(mount, `keeper/services/t28-${id}/db`, { password: `pw-${mount}` });
      const read = await raw('GET', data(`keeper/services/t28-${id}/db`), scenarioToken);
      assert.equal(read.status, 200);
      assert.deepEqual(v2 ? JSON.parse(read.text).data.data : JSON.parse(read.text).data, { password: `pw-${mount}` });

      const inc = `keeper/services/incarnations/t28-${id}/runs`;
      assert.ok(
        [200, 204].includes(
          (await raw('POST', data(`${inc}/r1`), scenarioToken, body({ api_token: `tok-${mount}` }))).status,
        ),
      );
      assert.ok(
        [200, 204].includes((await raw('POST', data(`${inc}/r2`), scenarioToken, body({ api_token: 'other' }))).status),
      );
      const back = await secretStoreCall('GET', v2 ? `secret/data/${inc}/r1` : `kv1/${inc}/r1`);
      assert.deepEqual(v2 ? back.data.data : back.data, { api_token: `tok-${mount}` });
      const listed = await raw('LIST', v2 ? `/v1/secret/metadata/${inc}/` : `/v1/kv1/${inc}/`, scenarioToken);
      assert.deepEqual(JSON.parse(listed.text).data.keys.sort(), ['r1', 'r2']);
      assert.ok(
        [200, 204].includes(
          (await raw('DELETE', v2 ? `/v1/secret/metadata/${inc}/r2` : `/v1/kv1/${inc}/r2`, scenarioToken)).status,
        ),
      );
      assert.equal((await raw('GET', data(`${inc}/r2`), keeperToken)).status, 404, 'deleted');

      // Writing anywhere else, inside the prefix or outside it, is the store's 403; nothing changed.
      for (const p of [`keeper/services/t28-${id}/db`, OWN, 'keeper']) {
        assert.equal((await raw('POST', data(p), scenarioToken, body({ password: 'x' }))).status, 403, p);
      }
      assert.equal(
        (await raw('DELETE', v2 ? `/v1/secret/metadata/${OWN}` : `/v1/kv1/${OWN}`, scenarioToken)).status,
        403,
      );
      const still = await secretStoreCall(
        'GET',
        v2 ? `secret/data/keeper/services/t28-${id}/db` : `kv1/keeper/services/t28-${id}/db`,
      );
      assert.deepEqual(v2 ? still.data.data : still.data, { password: `pw-${mount}` });
      const own = await secretStoreCall('GET', v2 ? `secret/data/${OWN}` : `kv1/${OWN}`);
      assert.equal((v2 ? own.data.data : own.data).signing_key, CANARY);
    });
  }

  describe("the keeper's client for the scenario role", () => {
    let store: SecretStore;
    let scenario: ScenarioSecrets;
    before(async () => {
      store = await connectSecretStore({
        addr: stackEnv().SECRETSTORE_ADDR,
        auth: SCENARIO_AUTH(),
        pki_mount: 'pki',
        pki_role: 'soul',
      });
      scenario = new ScenarioSecrets(store, 'secret/keeper/services/');
    });
    after(() => store?.close());

    it('refuses paths outside the prefix or not canonical by its own rule, before asking the store', async () => {
      for (const p of [
        'secret/keeper',
        `secret/${OWN}`,
        'secret/keeper/services/../../keeper',
        'kv1/keeper/services/x',
      ]) {
        await assert.rejects(
          scenario.readFields(p),
          (e: unknown) =>
            e instanceof SecretStoreError &&
            (e.kind === 'outside_prefix' || e.kind === 'bad_reference') &&
            !String(e.message).includes(CANARY),
          p,
        );
      }
      await assert.rejects(
        scenario.resolveRef('secretstore:secret/keeper', 'signing_key'),
        (e: unknown) => e instanceof SecretStoreError && e.kind === 'outside_prefix',
      );
      await assert.rejects(
        scenario.writeFields(`secret/keeper/services/t28-${id}/db`, { password: 'x' }),
        /is not below secret\/keeper\/services\/incarnations\/: the keeper writes only the values of secret inputs/,
      );
    });

    it("reads a scenario secret, writes an incarnation's inputs, and deletes them all with the incarnation", async () => {
      await putSecret('secret', `keeper/services/t28-${id}/db`, { password: 'pw' });
      assert.deepEqual(await scenario.readFields(`secret/keeper/services/t28-${id}/db`), { password: 'pw' });
      const inc = `secret/keeper/services/incarnations/t28-${id}`;
      await scenario.writeFields(`${inc}/runs/r1`, { a: '1' });
      await scenario.writeFields(`${inc}/runs/r2`, { a: '2' });
      assert.equal(await scenario.deleteBelow(inc), 2);
      assert.equal(
        (await raw('GET', `/v1/secret/data/keeper/services/incarnations/t28-${id}/runs/r1`, keeperToken)).status,
        404,
      );
      assert.equal(await scenario.deleteBelow(inc), 0, 'nothing left');
    });
  });
});
