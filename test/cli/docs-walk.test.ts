// The quick start of docs/cli.md, run as written (issue 31, "keeperctl covers every documented
// step"): every `keeperctl` line of its first fenced block is run, in order, by the real program
// against a real keeper with one real soul, its placeholders replaced by this stack's values, so
// the guide cannot drift from keeperctl. A placeholder this walk does not know fails it, as does a
// command that exits non-zero. Service: the motd fixture (test/fixtures/services/motd).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { TestKeeper } from '../support/keeper';
import { repoRoot } from '../support/repo';
import { serviceRepo } from '../support/service-repo';
import { startRunKeeper, startSouls, tempDir, type TestSoul } from '../runs/keeper';
import { sectionShBlock, shCommands, words } from './doc-commands';
import { runKeeperctl } from '../support/keeperctl-process';

/** The `keeperctl` lines of the quick start's first fenced block, comments stripped, split into words. */
function quickStartCommands(markdown: string): string[][] {
  return shCommands(sectionShBlock(markdown, 'docs/cli.md', 'Quick start')).map((l) => words(l).slice(1));
}

describe('docs/cli.md quick start, walked with keeperctl alone', function () {
  this.timeout(300_000);
  let k: TestKeeper;
  let root: string;
  let souls: TestSoul[] = [];

  before(async () => {
    root = tempDir('docs-walk-');
    fs.mkdirSync(path.join(root, 'home'));
    const repo = serviceRepo({ fixture: 'motd' });
    repo.tag('v1', true);
    k = await startRunKeeper();
    souls = await startSouls(k, path.join(root, 'souls'), [['edge']]);
    fs.writeFileSync(path.join(root, 'admin.jwt'), k.adminToken, { mode: 0o600 });
    fs.writeFileSync(path.join(root, 'git-url'), repo.url);
  });
  after(async () => {
    await Promise.all(souls.map((s) => s.run.kill()));
    await k?.stop();
    fs.rmSync(root, { recursive: true, force: true });
  });

  // No KEEPER_URL or KEEPER_TOKEN: the walk's own `login` is what points keeperctl at the keeper.
  const ctl = (args: string[]) =>
    runKeeperctl(args, {
      PATH: process.env['PATH'],
      HOME: path.join(root, 'home'),
      XDG_CONFIG_HOME: path.join(root, 'config'),
    });

  it('runs every command of the quick start in order, each exiting 0, and ends with the service on the host and the activity recorded', async () => {
    const commands = quickStartCommands(fs.readFileSync(path.join(repoRoot(), 'docs', 'cli.md'), 'utf8'));
    assert.ok(commands.length >= 8, `the quick start lost its commands: ${JSON.stringify(commands)}`);
    const out = path.join(root, 'out');
    // `<key>=<value>`: the create's inputs first, a new message for the later operation.
    const inputs = [
      [`root=${out}`, '--input', 'package=git', '--input', 'message=from the guide'],
      ['message=hello again'],
    ];
    let planId: string | undefined;
    const fixed: Record<string, () => string> = {
      '<keeper-url>': () => k.baseUrl,
      '<admin.jwt>': () => path.join(root, 'admin.jwt'),
      '<coven>': () => 'edge',
      '<service>': () => 'motd',
      '<git-url>': () => fs.readFileSync(path.join(root, 'git-url'), 'utf8'),
      '<ref>': () => 'v1',
      '<name>': () => 'motd-guide',
      '<operation>': () => 'create',
      '<aid>': () => 'admin',
      '<plan_id>': () => {
        assert.ok(planId, 'a command used <plan_id> before a plan printed one');
        return planId;
      },
    };
    const seen: string[] = [];
    for (const words of commands) {
      const args = words.flatMap((w) => {
        if (w === '<key>=<value>') {
          const next = inputs.shift();
          assert.ok(next, 'more --input placeholders than the walk has values for');
          return next;
        }
        const all = w.replace(/<[^>]+>/g, (p) => {
          const f = fixed[p];
          assert.ok(f, `docs/cli.md quick start: placeholder ${p} is unknown to the walk (test/cli/docs-walk.test.ts)`);
          return f();
        });
        return [all];
      });
      const r = await ctl(args);
      assert.equal(r.code, 0, `keeperctl ${args.join(' ')}\nexit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
      planId = /apply-plan \S+ (\S+)/.exec(r.stdout)?.[1] ?? planId;
      seen.push(`${args[0]} ${args[1] ?? ''}`.trim());
      if (args[0] === 'activity') {
        // Action (the route) and target (the path) of the walk's own calls.
        assert.match(
          r.stdout,
          /POST \/v1\/incarnations\/\{name\}\/plans\s+\/v1\/incarnations\/motd-guide\/plans/,
          r.stdout,
        );
        assert.match(r.stdout, /POST \/v1\/services\s+\/v1\/services\b/, r.stdout);
      }
    }
    assert.ok(planId, 'the walk made a plan');
    assert.ok(seen.includes('incarnations apply-plan'), JSON.stringify(seen));
    assert.match(fs.readFileSync(path.join(out, 'etc', 'motd'), 'utf8'), /hello again/);
    const inc = JSON.parse((await ctl(['incarnations', 'get', 'motd-guide', '-o', 'json'])).stdout);
    assert.equal(inc.status, 'ready');
  });
});
