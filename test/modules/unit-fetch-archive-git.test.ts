// The second shelf's systemd unit, download, archive and git modules against a real init system: the
// Debian 12 root with systemd as PID 1 (test/modules/systemd-root.ts), the soul's own step handler and
// ledger applying each step inside it (test/modules/in-root.ts). Every change is planned first (a dry
// run), the plan must say what the apply then does, and a second apply must change nothing.
// Downloads come from an HTTP server this test starts on the loopback address: the root shares the
// machine's network (systemd-root.ts makes no network namespace), so 127.0.0.1 inside is the test's.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { SystemdRoot } from './systemd-root';

interface Reply {
  changed: boolean;
  ok: boolean;
  output: string;
  diff?: Record<string, unknown>;
}
type Step = { module: string; params: Record<string, unknown> };

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe('systemd unit, url, archive and git modules on a Debian 12 root with systemd as PID 1', function () {
  this.timeout(900_000);
  let root: SystemdRoot;
  let applies = 0;
  let server: http.Server;
  let base = '';
  const files = new Map<string, Buffer>();
  const requests: string[] = [];
  let work = '';

  before(async () => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'shelf2-'));
    server = http.createServer((req, res) => {
      requests.push(req.url ?? '');
      const body = files.get(req.url ?? '');
      if (!body) {
        res.writeHead(404).end('not here\n');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': body.length }).end(body);
    });
    await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    root = await SystemdRoot.boot();
  });
  after(async () => {
    await root?.stop();
    server?.close();
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  async function apply(steps: Step[], opts: { dryRun?: boolean; showContent?: boolean } = {}): Promise<Reply[]> {
    const input = JSON.stringify({ applyId: `shelf2-${++applies}`, steps, ...opts });
    const out = await root.ok(['node', '/opt/keeper/dist/test/modules/in-root.js'], { input });
    return out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Reply);
  }

  // The plan's verb ("would create ...", "would check out ...") in the past tense starts the apply's output.
  const PAST: Record<string, string> = {
    create: 'created',
    update: 'updated',
    reload: 'reloaded',
    enable: 'enabled',
    disable: 'disabled',
    start: 'started',
    stop: 'stopped',
    download: 'downloaded',
    replace: 'replaced',
    extract: 'extracted',
    clone: 'cloned',
    check: 'checked',
  };

  /** Plans, applies, re-applies: the plan predicts the apply; the second apply changes nothing. */
  async function converge(steps: Step[]): Promise<{ plan: Reply[]; done: Reply[] }> {
    const plan = await apply(steps, { dryRun: true, showContent: true });
    const done = await apply(steps);
    for (const [i, p] of plan.entries()) {
      const d = done[i]!;
      assert.ok(p.ok && d.ok, `step ${i} (${steps[i]!.module}): plan ${p.output} / apply ${d.output}`);
      assert.equal(d.changed, p.changed, `step ${i}: the plan said changed=${p.changed}, the apply ${d.changed}`);
      if (p.changed) {
        const verb = p.output.replace(/^would /, '').split(' ')[0]!;
        assert.equal(d.output.split(' ')[0], PAST[verb] ?? verb, `step ${i}: ${p.output} / ${d.output}`);
      }
    }
    const again = await apply(steps);
    assert.deepEqual(
      again.map((r) => [r.ok, r.changed]),
      steps.map(() => [true, false]),
      JSON.stringify(again),
    );
    return { plan, done };
  }

  const show = async (unit: string, prop: string) =>
    (await root.ok(['systemctl', 'show', `--property=${prop}`, '--value', unit])).trim();

  it('systemd.unit: a service and its timer written, reloaded, enabled and started in one step each; edited; stopped', async () => {
    const service = {
      module: 'core.systemd.unit',
      params: {
        name: 'keeper-tick.service',
        content: '[Unit]\nDescription=tick\n[Service]\nType=oneshot\nExecStart=/usr/bin/touch /var/tmp/ticked\n',
      },
    };
    const timerText = (every: string) =>
      `[Unit]\nDescription=tick timer\n[Timer]\nOnBootSec=1h\nOnUnitActiveSec=${every}\n[Install]\nWantedBy=timers.target\n`;
    const timer = {
      module: 'core.systemd.unit',
      params: { name: 'keeper-tick.timer', content: timerText('1h'), enabled: true, state: 'started' },
    };
    const { plan, done } = await converge([service, timer]);
    assert.deepEqual(
      plan.map((p) => p.output),
      [
        'would create /etc/systemd/system/keeper-tick.service, reload unit files (daemon-reload) (dry run)',
        'would create /etc/systemd/system/keeper-tick.timer, reload unit files (daemon-reload), enable keeper-tick.timer at boot, start keeper-tick.timer (dry run)',
      ],
    );
    const content = plan[1]!.diff!.content as { unified: string };
    assert.match(content.unified, /^\+OnUnitActiveSec=1h$/m);
    assert.equal(
      done[1]!.output,
      'created /etc/systemd/system/keeper-tick.timer, reloaded unit files (daemon-reload), enabled keeper-tick.timer at boot, started keeper-tick.timer',
    );
    assert.deepEqual(
      [await show('keeper-tick.timer', 'ActiveState'), await show('keeper-tick.timer', 'UnitFileState')],
      ['active', 'enabled'],
    );
    assert.equal(fs.statSync(root.path('/etc/systemd/system/keeper-tick.timer')).mode & 0o7777, 0o644);

    // An edit: the plan shows the hunk and the reload; the timer stays enabled and running.
    const edited = { ...timer, params: { ...timer.params, content: timerText('30min') } };
    const changed = await converge([edited]);
    assert.equal(
      changed.plan[0]!.output,
      'would update /etc/systemd/system/keeper-tick.timer, reload unit files (daemon-reload) (dry run)',
    );
    const hunk = (changed.plan[0]!.diff!.content as { unified: string }).unified;
    assert.match(hunk, /^-OnUnitActiveSec=1h$/m);
    assert.match(hunk, /^\+OnUnitActiveSec=30min$/m);
    assert.equal(await show('keeper-tick.timer', 'NeedDaemonReload'), 'no');
    assert.match(await show('keeper-tick.timer', 'TimersMonotonic'), /OnUnitActiveUSec=30min/);

    // Without content: the file is left alone, only the state changes.
    const off = await converge([
      { module: 'core.systemd.unit', params: { name: 'keeper-tick.timer', enabled: false, state: 'stopped' } },
    ]);
    assert.equal(off.plan[0]!.output, 'would disable keeper-tick.timer at boot, stop keeper-tick.timer (dry run)');
    assert.deepEqual(off.plan[0]!.diff!.before, { exists: true, active: true, enabled: true });
    assert.deepEqual(
      [await show('keeper-tick.timer', 'ActiveState'), await show('keeper-tick.timer', 'UnitFileState')],
      ['inactive', 'disabled'],
    );
  });

  it('systemd.unit then core.service.running in one plan: the service step knows the unit the plan would write', async () => {
    const steps = [
      {
        module: 'core.systemd.unit',
        params: { name: 'keeper-sleep.service', content: '[Service]\nExecStart=/bin/sleep 1000\n' },
      },
      { module: 'core.service.running', params: { name: 'keeper-sleep' } },
    ];
    const { plan, done } = await converge(steps);
    assert.deepEqual(
      plan.map((p) => p.output),
      [
        'would create /etc/systemd/system/keeper-sleep.service, reload unit files (daemon-reload) (dry run)',
        'would reload unit files (daemon-reload), start keeper-sleep (dry run)',
      ],
    );
    assert.equal(done[1]!.output, 'reloaded unit files (daemon-reload), started keeper-sleep');
    assert.equal(await show('keeper-sleep', 'ActiveState'), 'active');
  });

  it('systemd.unit refuses bad params naming the param and the fix, before anything is written', async () => {
    const bad = await apply([
      // enabled without an [Install] section: systemctl enable would do nothing, every run
      {
        module: 'core.systemd.unit',
        params: { name: 'keeper-x.timer', content: '[Timer]\nOnBootSec=1h\n', enabled: true },
      },
      { module: 'core.systemd.unit', params: { name: 'keeper-x', content: '[Service]\nExecStart=/bin/true\n' } },
      { module: 'core.systemd.unit', params: { name: 'keeper-y.service', state: 'started' } },
      { module: 'core.systemd.unit', params: { name: 'keeper-z.service', state: 'running' } },
    ]);
    assert.deepEqual(
      bad.map((r) => [r.ok, r.changed]),
      bad.map(() => [false, false]),
    );
    assert.match(bad[0]!.output, /param "enabled": keeper-x.timer has no \[Install\] section.*WantedBy=timers.target/);
    assert.match(bad[1]!.output, /"name"/);
    assert.match(bad[2]!.output, /no unit named keeper-y.service on this host; give "content"/);
    assert.match(bad[3]!.output, /"state"/);
    assert.equal(fs.existsSync(root.path('/etc/systemd/system/keeper-x.timer')), false);
  });

  it('url.fetched: downloaded once into place with its mode, verified; a changed checksum replaces it; a mismatch leaves nothing', async () => {
    const v1 = Buffer.from('release one\n'.repeat(1000));
    files.set('/dl/app.bin', v1);
    const step = (sum: string, extra: Record<string, unknown> = {}) => ({
      module: 'core.url.fetched',
      params: { path: '/opt/dl/app.bin', url: `${base}/dl/app.bin`, checksum: `sha256:${sum}`, mode: '0640', ...extra },
    });
    requests.length = 0;
    const { plan, done } = await converge([step(sha(v1))]);
    assert.equal(
      plan[0]!.output,
      `would download /opt/dl/app.bin from ${base}/dl/app.bin (sha256:${sha(v1).slice(0, 12)}…, mode 0640) (dry run)`,
    );
    assert.equal(
      done[0]!.output,
      `downloaded /opt/dl/app.bin from ${base}/dl/app.bin (12000 bytes, sha256 verified, mode 0640)`,
    );
    assert.deepEqual(requests, ['/dl/app.bin'], 'the plan and the second apply download nothing');
    assert.deepEqual(fs.readFileSync(root.path('/opt/dl/app.bin')), v1);
    assert.equal(fs.statSync(root.path('/opt/dl/app.bin')).mode & 0o7777, 0o640);

    // A new release: the checksum differs from the file's, so it is fetched again.
    const v2 = Buffer.from('release two\n');
    files.set('/dl/app.bin', v2);
    const next = await converge([step(sha(v2), { mode: '0644' })]);
    assert.deepEqual(next.plan[0]!.diff, {
      url: `${base}/dl/app.bin`,
      fetched: true,
      checksum: { from: `sha256:${sha(v1)}`, to: `sha256:${sha(v2)}` },
      mode: '0644',
    });
    assert.match(next.done[0]!.output, /^replaced \/opt\/dl\/app.bin/);
    assert.deepEqual(fs.readFileSync(root.path('/opt/dl/app.bin')), v2);

    // The server's bytes do not match the checksum: the step fails naming it, the old file stays, no temp file.
    const wrong = await apply([step(sha(v1))]);
    assert.deepEqual([wrong[0]!.ok, wrong[0]!.changed], [false, false]);
    assert.match(
      wrong[0]!.output,
      new RegExp(
        `param "checksum": the 12 bytes downloaded from .* have sha256:${sha(v2)}, not sha256:${sha(v1)}; nothing was written`,
      ),
    );
    assert.deepEqual(fs.readFileSync(root.path('/opt/dl/app.bin')), v2);
    const fresh = await apply([{ ...step(sha(v1)), params: { ...step(sha(v1)).params, path: '/opt/dl/new.bin' } }]);
    assert.equal(fresh[0]!.ok, false);
    assert.deepEqual(fs.readdirSync(root.path('/opt/dl')), ['app.bin']);

    const missing = await apply([
      { module: 'core.url.fetched', params: { path: '/opt/dl/x', url: `${base}/nope`, checksum: `sha256:${sha(v1)}` } },
      {
        module: 'core.url.fetched',
        params: { path: '/opt/dl/x', url: 'ftp://example.org/x', checksum: `sha256:${sha(v1)}` },
      },
      { module: 'core.url.fetched', params: { path: '/opt/dl/x', url: `${base}/dl/app.bin`, checksum: 'md5:abc' } },
    ]);
    assert.deepEqual(
      missing.map((r) => r.ok),
      [false, false, false],
    );
    assert.match(missing[0]!.output, /param "url": http:\/\/127.0.0.1:\d+\/nope answered HTTP 404/);
    assert.match(missing[1]!.output, /"url"/);
    assert.match(missing[2]!.output, /"checksum"/);
  });

  it('archive.extracted: a downloaded tar.gz unpacked once (marker or creates), again when it changes; escaping and zip without unzip refused', async () => {
    const src = path.join(work, 'src');
    fs.mkdirSync(path.join(src, 'app-1', 'bin'), { recursive: true });
    fs.writeFileSync(path.join(src, 'app-1', 'bin', 'app'), '#!/bin/sh\necho one\n', { mode: 0o755 });
    fs.writeFileSync(path.join(src, 'app-1', 'README'), 'one\n');
    execFileSync('tar', ['-czf', path.join(work, 'app.tgz'), '-C', src, 'app-1']);
    const tgz = fs.readFileSync(path.join(work, 'app.tgz'));
    files.set('/dl/app.tgz', tgz);
    const fetchStep = {
      module: 'core.url.fetched',
      params: { path: '/opt/dl/app.tgz', url: `${base}/dl/app.tgz`, checksum: `sha256:${sha(tgz)}` },
    };
    const unpack = { module: 'core.archive.extracted', params: { src: '/opt/dl/app.tgz', dest: '/opt/app' } };
    await converge([fetchStep]);
    const { plan } = await converge([unpack]);
    assert.equal(
      plan[0]!.output,
      'would extract /opt/dl/app.tgz (4 entries) into /opt/app (a new folder) (not unpacked here before (no .keeper-extracted.app.tgz in /opt/app)) (dry run)',
    );
    assert.equal(fs.readFileSync(root.path('/opt/app/app-1/bin/app'), 'utf8'), '#!/bin/sh\necho one\n');
    assert.equal((await root.ok(['/opt/app/app-1/bin/app'])).trim(), 'one');
    assert.equal(fs.readFileSync(root.path('/opt/app/.keeper-extracted.app.tgz'), 'utf8'), `${sha(tgz)}\n`);

    // A changed archive is unpacked again (the marker holds the old hash).
    fs.writeFileSync(path.join(src, 'app-1', 'README'), 'two\n');
    execFileSync('tar', ['-czf', path.join(work, 'app2.tgz'), '-C', src, 'app-1']);
    const tgz2 = fs.readFileSync(path.join(work, 'app2.tgz'));
    files.set('/dl/app.tgz', tgz2);
    const again = await converge([
      { ...fetchStep, params: { ...fetchStep.params, checksum: `sha256:${sha(tgz2)}` } },
      unpack,
    ]);
    // The plan knows the download before it happens (the soul's memory of the plan's earlier steps).
    assert.equal(
      again.plan[1]!.output,
      'would extract /opt/dl/app.tgz into /opt/app (an earlier step of this run writes /opt/dl/app.tgz) (dry run)',
    );
    assert.match(
      again.done[1]!.output,
      /^extracted \/opt\/dl\/app.tgz \(4 entries\) into \/opt\/app \(the archive changed since it was last unpacked \(sha256 /,
    );
    assert.equal(fs.readFileSync(root.path('/opt/app/app-1/README'), 'utf8'), 'two\n');

    // creates and strip_components: the marker is the path the archive makes.
    const stripped = await converge([
      {
        module: 'core.archive.extracted',
        params: { src: '/opt/dl/app.tgz', dest: '/opt/app2', creates: '/opt/app2/bin/app', strip_components: 1 },
      },
    ]);
    assert.match(stripped.plan[0]!.output, /\(creates: \/opt\/app2\/bin\/app does not exist\) \(dry run\)$/);
    assert.ok(fs.existsSync(root.path('/opt/app2/bin/app')));
    assert.equal(fs.existsSync(root.path('/opt/app2/.keeper-extracted.app.tgz')), false);

    // An archive with a ../ entry is refused before anything is written, in a plan too.
    fs.mkdirSync(path.join(root.path('/opt/dl')), { recursive: true });
    execFileSync('tar', [
      '-cf',
      root.path('/opt/dl/evil.tar'),
      '-P',
      '-C',
      src,
      'app-1/README',
      '--transform',
      's,^app-1,../escaped,',
    ]);
    for (const dryRun of [true, false]) {
      const [evil] = await apply(
        [{ module: 'core.archive.extracted', params: { src: '/opt/dl/evil.tar', dest: '/opt/evil' } }],
        { dryRun },
      );
      assert.deepEqual([evil!.ok, evil!.changed], [false, false]);
      assert.match(
        evil!.output,
        /holds the entry "\.\.\/escaped\/README", which would land outside dest; refusing to unpack it/,
      );
    }
    assert.deepEqual([fs.existsSync(root.path('/opt/evil')), fs.existsSync(root.path('/opt/escaped'))], [false, false]);

    // A zip needs unzip, which this root (as a minimal Debian) does not have: the error names the fix.
    fs.writeFileSync(root.path('/opt/dl/app.zip'), 'PK\x05\x06' + '\0'.repeat(18));
    const bad = await apply([
      { module: 'core.archive.extracted', params: { src: '/opt/dl/app.zip', dest: '/opt/zip' } },
      { module: 'core.archive.extracted', params: { src: '/opt/dl/none.tgz', dest: '/opt/none' } },
      { module: 'core.archive.extracted', params: { src: '/opt/dl/app.tgz', dest: 'opt/rel' } },
    ]);
    assert.deepEqual(
      bad.map((r) => r.ok),
      [false, false, false],
    );
    assert.match(
      bad[0]!.output,
      /unzip is not installed on this host; add a core.pkg.installed step for unzip before this one/,
    );
    assert.match(bad[1]!.output, /param "src": \/opt\/dl\/none.tgz does not exist on this host/);
    assert.match(bad[2]!.output, /"dest"/);
  });

  it('git.checkout: cloned at a tag, moved to a branch (the plan names both commits), local changes refused, an unknown ref named', async () => {
    const g = (...args: string[]) => root.ok(['git', '-c', 'user.name=t', '-c', 'user.email=t@example.org', ...args]);
    await g('init', '--quiet', '--bare', '--initial-branch=main', '/srv/src.git');
    await g('clone', '--quiet', '/srv/src.git', '/root/work');
    fs.writeFileSync(root.path('/root/work/app.txt'), 'v1\n');
    await g('-C', '/root/work', 'add', 'app.txt');
    await g('-C', '/root/work', 'commit', '--quiet', '-m', 'one');
    await g('-C', '/root/work', 'tag', '-a', 'v1', '-m', 'v1');
    fs.writeFileSync(root.path('/root/work/app.txt'), 'v2\n');
    await g('-C', '/root/work', 'commit', '--quiet', '-am', 'two');
    await g('-C', '/root/work', 'push', '--quiet', '--tags', 'origin', 'main');
    const v1 = (await g('-C', '/root/work', 'rev-parse', 'v1^{commit}')).trim();
    const v2 = (await g('-C', '/root/work', 'rev-parse', 'main')).trim();
    const repo = 'file:///srv/src.git';

    const atTag = await converge([{ module: 'core.git.checkout', params: { repo, dest: '/opt/src', ref: 'v1' } }]);
    assert.equal(atTag.plan[0]!.output, `would clone ${repo} into /opt/src at v1 (${v1.slice(0, 12)}) (dry run)`);
    assert.deepEqual(atTag.plan[0]!.diff, { repo, dest: '/opt/src', ref: 'v1', from: null, to: v1 });
    assert.equal(fs.readFileSync(root.path('/opt/src/app.txt'), 'utf8'), 'v1\n');

    const moved = await converge([{ module: 'core.git.checkout', params: { repo, dest: '/opt/src', ref: 'main' } }]);
    assert.equal(
      moved.plan[0]!.output,
      `would check out main in /opt/src: move from ${v1.slice(0, 12)} to ${v2.slice(0, 12)} (dry run)`,
    );
    assert.equal(
      moved.done[0]!.output,
      `checked out main in /opt/src: moved from ${v1.slice(0, 12)} to ${v2.slice(0, 12)}`,
    );
    assert.equal((await g('-C', '/opt/src', 'rev-parse', 'HEAD')).trim(), v2);

    // A new commit on the branch: the next plan moves to it; a local edit is never overwritten.
    fs.writeFileSync(root.path('/root/work/app.txt'), 'v3\n');
    await g('-C', '/root/work', 'commit', '--quiet', '-am', 'three');
    await g('-C', '/root/work', 'push', '--quiet', 'origin', 'main');
    fs.writeFileSync(root.path('/opt/src/app.txt'), 'edited on the host\n');
    const [dirty] = await apply([{ module: 'core.git.checkout', params: { repo, dest: '/opt/src', ref: 'main' } }]);
    assert.deepEqual([dirty!.ok, dirty!.changed], [false, false]);
    assert.match(
      dirty!.output,
      /\/opt\/src has local changes that a checkout would overwrite \(app.txt\); commit or undo them/,
    );
    assert.equal(fs.readFileSync(root.path('/opt/src/app.txt'), 'utf8'), 'edited on the host\n');
    await g('-C', '/opt/src', 'checkout', '--quiet', '--', 'app.txt');
    const v3 = await converge([{ module: 'core.git.checkout', params: { repo, dest: '/opt/src', ref: 'main' } }]);
    assert.match(v3.plan[0]!.output, new RegExp(`move from ${v2.slice(0, 12)} to `));
    assert.equal(fs.readFileSync(root.path('/opt/src/app.txt'), 'utf8'), 'v3\n');

    const bad = await apply([
      { module: 'core.git.checkout', params: { repo, dest: '/opt/src', ref: 'v9' } },
      { module: 'core.git.checkout', params: { repo: 'ext::sh -c touch% /tmp/pwned', dest: '/opt/x' } },
      { module: 'core.git.checkout', params: { repo: 'file:///srv/other.git', dest: '/opt/src' } },
    ]);
    assert.deepEqual(
      bad.map((r) => r.ok),
      [false, false, false],
    );
    assert.match(bad[0]!.output, /param "ref": file:\/\/\/srv\/src.git has no branch or tag named "v9"/);
    assert.match(bad[1]!.output, /"repo"/);
    assert.match(
      bad[2]!.output,
      /param "dest": \/opt\/src is a checkout of file:\/\/\/srv\/src.git, not file:\/\/\/srv\/other.git/,
    );
    assert.equal(fs.existsSync(root.path('/tmp/pwned')), false);
  });
});
