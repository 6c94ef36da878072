// Versions and the ends of an incarnation's life (issue 17 items 1 and 6) on the real stack, with the
// real scenario engine, a real soul and a local git repository of the motd service: published
// versions are pinned to the commit their ref had when published, so moving a tag or pushing to the
// branch changes nothing; an upgrade to v2 runs its migration once and runs apply v2 from then on;
// a downgrade is refused; DELETE runs `destroy` on the host, removes the incarnation from the lists,
// keeps its history readable and frees the name; `?force=true` removes a record without a run.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { TestKeeper } from '../support/keeper';
import { serviceRepo, type ServiceRepo } from '../support/service-repo';
import { api, startRunKeeper, startSouls, stopRunRig, tempDir, waitFor, type TestSoul } from './keeper';

const V1_SERVICE = 'name: motd\nstate_schema_version: 1\n';
const V2_SERVICE = 'name: motd\nstate_schema_version: 2\n';
// Writes a farewell where the message was: what destroy did is visible on the host.
const DESTROY = `description: Take the message of the day down.
input:
  root:
    type: string
tasks:
  - name: motd file
    module: core.file.present
    params:
      path: "\${input.root}/etc/motd"
      content: "decommissioned\\n"
      mode: "0644"
`;

describe('service versions, upgrade between them, and deleting incarnations', function () {
  this.timeout(300_000);
  let k: TestKeeper;
  let root: string;
  let souls: TestSoul[];
  let repo: ServiceRepo;
  let v1Commit: string;
  let v2Commit: string;
  const out = () => path.join(root, 'out');
  const motd = () => fs.readFileSync(path.join(out(), 'etc', 'motd'), 'utf8');

  /** Polls until the incarnation leaves `applying` (or is gone: 404 after a committed destroy). */
  const settle = (name: string) =>
    waitFor(
      `${name} to settle`,
      async () => {
        const r = await api(k, 'GET', `/v1/incarnations/${name}`);
        if (r.status === 404) return r;
        return r.status === 200 && r.body.status !== 'applying' ? r : undefined;
      },
      60_000,
      200,
    );

  const runOf = async (name: string, applyId: string) =>
    (await api(k, 'GET', `/v1/incarnations/${name}/runs/${applyId}`)).body;

  before(async () => {
    root = tempDir('versions-');
    repo = serviceRepo({ dir: path.join(root, 'motd-src'), tags: [] });
    v1Commit = repo.commit(
      {
        'service.yml': V1_SERVICE,
        'migrations/2.yml': null,
        'migrations/3.yml': null,
        'scenario/destroy/main.yml': DESTROY,
      },
      'v1',
    );
    repo.tag('v1');
    k = await startRunKeeper();
    souls = await startSouls(k, path.join(root, 'souls'), [['edge']]);
    const r = await api(k, 'POST', '/v1/services', { name: 'motd', git: repo.url, ref: 'v1' });
    assert.equal(r.status, 201, JSON.stringify(r.body));
  });
  after(() => stopRunRig({ souls, k, root }));

  it('registration published the ref as the first version, pinned to its commit', async () => {
    const list = (await api(k, 'GET', '/v1/services/motd/versions')).body;
    assert.deepEqual(
      list.items.map((v: any) => [v.version, v.commit, v.state_schema_version]),
      [['v1', v1Commit, 1]],
    );
    const v = (await api(k, 'GET', '/v1/services/motd/versions/v1')).body;
    assert.deepEqual(
      v.operations.map((o: any) => o.name),
      ['create', 'destroy', 'update'],
    );
    const create = v.operations.find((o: any) => o.name === 'create');
    assert.deepEqual(
      create.inputs.find((i: any) => i.name === 'message'),
      { name: 'message', type: 'string', required: false, secret: false, default: 'Welcome' },
    );
    assert.deepEqual(v.operations.find((o: any) => o.name === 'destroy').inputs, [
      { name: 'root', type: 'string', required: true, secret: false },
    ]);
    assert.equal((await api(k, 'GET', '/v1/services/motd/versions/v7')).status, 404);
  });

  it('an incarnation on v1 keeps applying v1 when the tag moves and the branch gets new commits, until v2 is published and upgraded to', async () => {
    const input = { root: out(), message: 'Hello', package: 'git' };
    let r = await api(k, 'POST', '/v1/incarnations', { name: 'motd-v', service: 'motd', covens: ['edge'], input });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    let inc = (await settle('motd-v')).body;
    assert.equal(inc.status, 'ready', JSON.stringify(inc.last_run));
    assert.deepEqual(
      [inc.version, inc.service_commit, inc.state_schema_version, inc.newer_version],
      ['v1', v1Commit, 1, null],
    );

    // v2: a new schema with its migration, and a template that says so. The branch moves and the
    // v1 tag is moved onto it too: neither is published, so nothing changes for the incarnation.
    const template = fs.readFileSync(path.join(repo.dir, 'templates', 'etc', 'motd.tmpl'), 'utf8');
    v2Commit = repo.commit(
      {
        'service.yml': V2_SERVICE,
        // A renamed key and a dropped one (docs/versions.md): nothing of v1's layout stays behind.
        'migrations/2.yml':
          'description: v2 keeps the message under motd and no longer counts revisions.\nstate_changes:\n' +
          '  moves:\n    message: motd.message\n  unsets: [revision]\n  sets:\n    motd.since: "v2"\n',
        'templates/etc/motd.tmpl': `${template}\n(motd v2)\n`,
      },
      'v2',
    );
    repo.tag('v2');
    repo.tag('v1', true);
    r = await api(k, 'POST', '/v1/incarnations/motd-v/runs', { operation: 'create' });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    inc = (await settle('motd-v')).body;
    assert.equal(inc.status, 'ready', JSON.stringify(inc.last_run));
    assert.equal(
      (await runOf('motd-v', r.body.apply_id)).service_commit,
      v1Commit,
      'the pinned v1 commit, not what the tag points at now',
    );
    assert.doesNotMatch(motd(), /motd v2/);
    assert.deepEqual([inc.version, inc.state_schema_version, inc.newer_version], ['v1', 1, null]);

    // Published: listed as newer; still not applied until the upgrade.
    r = await api(k, 'POST', '/v1/services/motd/versions', { ref: 'v2' });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.deepEqual([r.body.version, r.body.commit, r.body.state_schema_version], ['v2', v2Commit, 2]);
    assert.equal((await api(k, 'POST', '/v1/services/motd/versions', { ref: 'v2' })).status, 409);
    const listed = (await api(k, 'GET', '/v1/incarnations?service=motd')).body.items.find(
      (i: any) => i.name === 'motd-v',
    );
    assert.deepEqual([listed.version, listed.newer_version], ['v1', 'v2']);

    r = await api(k, 'POST', '/v1/incarnations/motd-v/upgrade', { version: 'v2' });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    inc = (await settle('motd-v')).body;
    assert.equal(inc.status, 'ready', JSON.stringify(inc.last_run));
    assert.deepEqual(
      [inc.version, inc.service_commit, inc.state_schema_version, inc.newer_version],
      ['v2', v2Commit, 2, null],
    );
    assert.deepEqual(
      inc.state,
      { motd: { message: 'Hello', since: 'v2' }, root: input.root },
      'migrations/2.yml moved message under motd, dropped revision and kept root',
    );
    const history = (await api(k, 'GET', '/v1/incarnations/motd-v/history')).body.items;
    assert.equal(history.filter((h: any) => h.operation === 'upgrade').length, 1, 'the migration ran once');

    r = await api(k, 'POST', '/v1/incarnations/motd-v/runs', { operation: 'create' });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    assert.equal((await settle('motd-v')).body.status, 'ready');
    assert.equal((await runOf('motd-v', r.body.apply_id)).service_commit, v2Commit);
    assert.match(motd(), /motd v2/, 'v2 is applied after the upgrade');
  });

  it('refuses an upgrade to an older state schema, and a version nobody published', async () => {
    let r = await api(k, 'POST', '/v1/incarnations/motd-v/upgrade', { version: 'v1' });
    assert.equal(r.status, 409, JSON.stringify(r.body));
    assert.match(
      r.body.detail,
      /forward only: incarnation motd-v's state is at state_schema_version 2, version v1 expects 1/,
    );
    r = await api(k, 'POST', '/v1/incarnations/motd-v/upgrade', { version: 'v3' });
    assert.equal(r.status, 400, JSON.stringify(r.body));
    assert.match(r.body.detail, /version v3 of service motd is not published/);
    const inc = (await api(k, 'GET', '/v1/incarnations/motd-v')).body;
    assert.deepEqual([inc.status, inc.version, inc.state_schema_version], ['ready', 'v2', 2]);
  });

  it('refuses to publish a ref that does not resolve or a commit that fails lint, with the reason, storing nothing', async () => {
    let r = await api(k, 'POST', '/v1/services/motd/versions', { ref: 'v9' });
    assert.equal(r.status, 422, JSON.stringify(r.body));
    assert.match(r.body.detail, /ref "v9" not found in the repository/);
    repo.commit({ 'scenario/create/main.yml': 'tasks:\n  - name: broken\n    module: core.nope\n' }, 'broken');
    repo.tag('broken');
    r = await api(k, 'POST', '/v1/services/motd/versions', { ref: 'broken' });
    assert.equal(r.status, 422, JSON.stringify(r.body));
    assert.match(r.body.detail, /fails soul-lint with \d+ error\(s\): scenario\/create\/main\.yml:\d+:\d+ /);
    const versions = (await api(k, 'GET', '/v1/services/motd/versions')).body.items.map((v: any) => v.version);
    assert.deepEqual(versions, ['v2', 'v1']);
  });

  it('DELETE runs destroy on the hosts, removes the incarnation from the lists, keeps its history and frees the name', async () => {
    const r = await api(k, 'DELETE', '/v1/incarnations/motd-v');
    assert.equal(r.status, 202, JSON.stringify(r.body));
    assert.equal(r.body.operation, 'destroy');
    const gone = await settle('motd-v');
    assert.equal(gone.status, 404, JSON.stringify(gone.body));
    assert.match(gone.body.detail, new RegExp(`was deleted at .* by run ${r.body.apply_id.replace(/\./g, '\\.')}`));
    assert.equal(motd(), 'decommissioned\n', 'destroy ran on the host');
    const report = await runOf('motd-v', r.body.apply_id);
    assert.equal(report.status, 'succeeded');
    assert.deepEqual(
      report.hosts.map((h: any) => h.sid),
      [souls[0]!.sid],
    );
    assert.ok(!(await api(k, 'GET', '/v1/incarnations')).body.items.some((i: any) => i.name === 'motd-v'));
    const history = (await api(k, 'GET', '/v1/incarnations/motd-v/history')).body.items;
    const ops = new Set(history.map((h: any) => h.operation));
    assert.ok(
      ops.has('create') && ops.has('upgrade'),
      `the deleted incarnation's snapshots are still readable: ${[...ops].join(', ')}`,
    );

    // The name is free: a new incarnation takes it with its own (empty) history.
    const again = await api(k, 'POST', '/v1/incarnations', {
      name: 'motd-v',
      service: 'motd',
      covens: ['nobody-here'],
      input: { root: path.join(root, 'again') },
      allow_empty: true,
    });
    assert.equal(again.status, 202, JSON.stringify(again.body));
    const inc = (await settle('motd-v')).body;
    assert.deepEqual([inc.status, inc.version], ['ready', 'v2']);
    assert.deepEqual(
      (await api(k, 'GET', '/v1/incarnations/motd-v/history')).body.items.map((h: any) => h.apply_id),
      [again.body.apply_id],
    );
  });

  it('a service without destroy needs ?force=true, which removes the record at once and touches no host', async () => {
    const plain = serviceRepo({ dir: path.join(root, 'plain-src'), tags: ['v3'] });
    let r = await api(k, 'POST', '/v1/services', { name: 'plain', git: plain.url, ref: 'v3' });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    r = await api(k, 'POST', '/v1/incarnations', {
      name: 'plain-one',
      service: 'plain',
      covens: ['nobody-here'],
      input: { root: path.join(root, 'plain') },
      allow_empty: true,
    });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    assert.equal((await settle('plain-one')).body.status, 'ready');
    r = await api(k, 'DELETE', '/v1/incarnations/plain-one');
    assert.equal(r.status, 409, JSON.stringify(r.body));
    assert.match(r.body.detail, /has no destroy operation .*pass \?force=true/);
    assert.equal((await api(k, 'GET', '/v1/incarnations/plain-one')).body.status, 'ready', 'nothing changed');
    r = await api(k, 'DELETE', '/v1/incarnations/plain-one?force=true');
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body, {
      name: 'plain-one',
      removed: true,
      forced: true,
      history: '/v1/incarnations/plain-one/history',
    });
    const gone = await api(k, 'GET', '/v1/incarnations/plain-one');
    assert.equal(gone.status, 404);
    assert.match(gone.body.detail, /was deleted at .* \(with force\)/);
    assert.equal((await api(k, 'GET', '/v1/incarnations/plain-one/history')).body.items.length, 1);
    assert.equal((await api(k, 'DELETE', '/v1/incarnations/plain-one?force=true')).status, 404);
  });
});
