// The pure edit logic of core.line.*, core.block.present, core.ini.set, core.sysctl.set and
// core.cron.present, then the modules through the registry on temp files: the plan's hunk, the
// mode kept, the second run unchanged, and params refused naming the param.
import assert from 'node:assert/strict';
import { promises as fs, realpathSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createFakeRunner } from '../exec/testing';
import { editBlock, markers } from './block';
import { cronFile, parseCronPresent } from './cron';
import { classifyIniLine, editIni } from './ini';
import { editLineAbsent, editLinePresent } from './line';
import { createStateRegistry } from './registry';
import { editSysctlConf, parseSysctlSet } from './sysctl';

const after = (e: { after: string } | null) => e?.after;

describe('core.line.present: the edit', () => {
  const text = 'a=1\n#b=2\nc=3\n';
  it('replaces the last line the regexp matches, and nothing else', () => {
    assert.deepEqual(editLinePresent({ line: 'b=9', regexp: /^#?b=/ }, 'b=0\n#b=2\nc=3\n'), {
      after: 'b=0\nb=9\nc=3\n',
      what: 'line 2 replaced',
    });
  });
  it('is null when the matched line is already the line, or no match but the line is there', () => {
    assert.equal(editLinePresent({ line: 'c=3', regexp: /^c=/ }, text), null);
    assert.equal(editLinePresent({ line: 'a=1', regexp: /^zzz/ }, text), null);
    assert.equal(editLinePresent({ line: 'a=1' }, text), null);
  });
  it('inserts at the end by default, ending a last line that had no newline', () => {
    assert.deepEqual(editLinePresent({ line: 'd=4' }, 'a=1'), {
      after: 'a=1\nd=4\n',
      what: 'line inserted at the end',
    });
    assert.deepEqual(editLinePresent({ line: 'd=4' }, ''), {
      after: 'd=4\n',
      what: 'line inserted into the empty file',
    });
  });
  it('inserts after or before the last match of insertafter/insertbefore, BOF at the top, no match at the end', () => {
    assert.equal(after(editLinePresent({ line: 'x', insertafter: /=/ }, text)), 'a=1\n#b=2\nc=3\nx\n');
    assert.equal(after(editLinePresent({ line: 'x', insertafter: /^#/ }, text)), 'a=1\n#b=2\nx\nc=3\n');
    assert.equal(after(editLinePresent({ line: 'x', insertbefore: /^#/ }, text)), 'a=1\nx\n#b=2\nc=3\n');
    assert.equal(after(editLinePresent({ line: 'x', insertbefore: 'BOF' }, text)), 'x\na=1\n#b=2\nc=3\n');
    assert.equal(after(editLinePresent({ line: 'x', insertafter: /^nothing/ }, text)), `${text}x\n`);
    assert.equal(editLinePresent({ line: 'x', insertbefore: /^#/ }, text)!.what, 'line inserted after line 1');
  });
  it('keeps a CRLF line ending on the replaced line', () => {
    assert.equal(after(editLinePresent({ line: 'a=2', regexp: /^a=/ }, 'a=1\r\nb\r\n')), 'a=2\r\nb\r\n');
  });
});

describe('core.line.absent: the edit', () => {
  it('removes every line matching the regexp, or equal to the line, saying which', () => {
    assert.deepEqual(editLineAbsent({ match: /^#/ }, '#a\nb\n#c\n'), {
      after: 'b\n',
      what: '2 lines removed (lines 1, 3)',
    });
    assert.deepEqual(editLineAbsent({ match: 'b' }, '#a\nb\nbb\n'), {
      after: '#a\nbb\n',
      what: '1 line removed (line 2)',
    });
    assert.equal(editLineAbsent({ match: 'zz' }, '#a\nb\n'), null);
    assert.equal(editLineAbsent({ match: /x/ }, ''), null);
  });
});

describe('core.block.present: the edit', () => {
  const m = markers('# {mark} KEEPER {name}', 'app');
  const base = { name: 'app', ...m };
  it('inserts the block with its markers, replaces its inside, keeps it when equal, removes it when empty', () => {
    const one = editBlock({ ...base, content: ['x=1'] }, 'top\n')!;
    assert.deepEqual(one, {
      after: 'top\n# BEGIN KEEPER app\nx=1\n# END KEEPER app\n',
      what: 'block app inserted at the end',
    });
    assert.equal(editBlock({ ...base, content: ['x=1'] }, one.after), null);
    const two = editBlock({ ...base, content: ['x=2', 'y=3'] }, `${one.after}tail\n`)!;
    assert.deepEqual(two, {
      after: 'top\n# BEGIN KEEPER app\nx=2\ny=3\n# END KEEPER app\ntail\n',
      what: 'block app replaced (lines 2-4)',
    });
    assert.deepEqual(editBlock({ ...base, content: [] }, two.after), {
      after: 'top\ntail\n',
      what: 'block app removed (lines 2-5)',
    });
    assert.equal(editBlock({ ...base, content: [] }, 'top\n'), null);
  });
  it('places a new block after or before the last match', () => {
    assert.equal(
      after(editBlock({ ...base, content: ['x'], insertbefore: /^b/ }, 'a\nb\n')),
      'a\n# BEGIN KEEPER app\nx\n# END KEEPER app\nb\n',
    );
    assert.equal(
      after(editBlock({ ...base, content: ['x'], insertafter: /^a/ }, 'a\nb\n')),
      'a\n# BEGIN KEEPER app\nx\n# END KEEPER app\nb\n',
    );
  });
  it('refuses a begin marker without its end, and an end without its begin', () => {
    assert.throws(
      () => editBlock({ ...base, content: ['x'] }, 'a\n# BEGIN KEEPER app\nx\n'),
      /line 2 is "# BEGIN KEEPER app" but no "# END KEEPER app" follows it/,
    );
    assert.throws(
      () => editBlock({ ...base, content: ['x'] }, '# END KEEPER app\n'),
      /without "# BEGIN KEEPER app" before it/,
    );
  });
  it('fills a custom marker', () => {
    assert.deepEqual(markers('; {mark} {name} block', 'db'), { begin: '; BEGIN db block', end: '; END db block' });
  });
});

describe('core.ini.set: parsing and the edit', () => {
  const ini = 'top = 1\n; comment\n[db]\nhost=localhost\nport = 5432\n\n[web]\nport = 80\n';
  const set = (section: string | undefined, key: string, value: string, spaces = true) =>
    editIni({ ...(section === undefined ? {} : { section }), key, value, spaces }, ini);
  it('classifies lines: sections, keys with their prefix, comments', () => {
    assert.deepEqual(classifyIniLine('  [ db ] '), { kind: 'section', name: 'db' });
    assert.deepEqual(classifyIniLine('host =  x y'), { kind: 'key', key: 'host', value: 'x y', prefix: 'host =  ' });
    assert.deepEqual(classifyIniLine('flag'), { kind: 'key', key: 'flag', value: '', prefix: 'flag' });
    assert.deepEqual(classifyIniLine('# a = b'), { kind: 'other' });
    assert.deepEqual(classifyIniLine('; a'), { kind: 'other' });
  });
  it('changes the value in its own section only, keeping the line spacing', () => {
    assert.deepEqual(set('db', 'host', 'db1'), {
      after: ini.replace('host=localhost', 'host=db1'),
      what: 'key host [db] changed (line 4)',
    });
    assert.equal(after(set('web', 'port', '8080')), ini.replace('port = 80\n', 'port = 8080\n'));
    assert.equal(set('db', 'port', '5432'), null);
    assert.equal(set(undefined, 'top', '1'), null);
  });
  it('adds a missing key after the last key of its section, and a missing section at the end', () => {
    assert.deepEqual(set('db', 'user', 'app'), {
      after: ini.replace('port = 5432\n', 'port = 5432\nuser = app\n'),
      what: 'key user added [db] (line 6)',
    });
    assert.equal(after(set(undefined, 'g', 'x', false)), `top = 1\ng=x\n${ini.slice('top = 1\n'.length)}`);
    assert.deepEqual(set('cache', 'size', '10'), {
      after: `${ini}\n[cache]\nsize = 10\n`,
      what: 'section [cache] added with key size',
    });
    assert.deepEqual(editIni({ section: 's', key: 'k', value: 'v', spaces: true }, ''), {
      after: '[s]\nk = v\n',
      what: 'section [s] added with key k',
    });
  });
});

describe('core.sysctl.set: the persisted file and the params', () => {
  it('sets the lines naming the parameter (dotted, slashed or "-"), appends when none, compares whitespace runs as one', () => {
    assert.deepEqual(editSysctlConf('kernel.msgmax', '65536', '# x\n'), {
      after: '# x\nkernel.msgmax = 65536\n',
      what: 'line added',
    });
    assert.deepEqual(editSysctlConf('kernel.msgmax', '65536', 'kernel/msgmax=8192\n-kernel.msgmax = 1\n'), {
      after: 'kernel/msgmax = 65536\n-kernel.msgmax = 65536\n',
      what: 'lines 1, 2 changed',
    });
    assert.equal(
      editSysctlConf('net.ipv4.tcp_rmem', '4096 87380 6291456', 'net.ipv4.tcp_rmem =4096\t87380  6291456\n'),
      null,
    );
  });
  it('maps the name under /proc/sys and the file under /etc/sysctl.d; refuses a path as file', () => {
    assert.deepEqual(parseSysctlSet({ name: 'kernel.msgmax', value: 65536 }), {
      name: 'kernel.msgmax',
      value: '65536',
      conf: '/etc/sysctl.d/99-keeper.conf',
      proc: '/proc/sys/kernel/msgmax',
    });
    assert.throws(
      () => parseSysctlSet({ name: 'kernel.msgmax', value: 1, file: '../x' }),
      /param "file" must be a file name/,
    );
    assert.throws(() => parseSysctlSet({ name: 'msgmax', value: 1 }), /param "name" must be a dotted kernel parameter/);
  });
});

describe('core.cron.present: the file and the params', () => {
  it('writes a header, the environment and the entry', () => {
    const p = parseCronPresent({ name: 'backup', schedule: '*/5 * * * *', command: 'date +\\%F', env: { MAILTO: '' } });
    assert.equal(
      cronFile(p),
      '# core.cron.present backup: written by Keeper; an edit here is replaced on its next run.\nMAILTO=\n*/5 * * * * root date +\\%F\n',
    );
  });
  it('refuses a dotted name, a short schedule and an unescaped %, naming the param and the fix', () => {
    assert.throws(
      () => parseCronPresent({ name: 'a.b', schedule: '@daily', command: 'x' }),
      /param "name" .*cron skips a cron.d file with a dot/,
    );
    assert.throws(
      () => parseCronPresent({ name: 'a', schedule: '* * *', command: 'x' }),
      /param "schedule" must be five fields/,
    );
    assert.throws(
      () => parseCronPresent({ name: 'a', schedule: '@daily', command: 'date +%F' }),
      /param "command" .*write \\% for a literal %/,
    );
  });
});

describe('the edit modules on files', () => {
  let dir: string;
  const registry = createStateRegistry({ facts: {}, runner: createFakeRunner().run });
  const run = (module: string, params: unknown, ctx = { dryRun: false }) => registry.get(module)!.run(params, ctx);
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(realpathSync(os.tmpdir()), 'keeper-edits-'));
  });
  afterEach(async () => fs.rm(dir, { recursive: true, force: true }));

  it('plans the hunk only, applies it keeping the mode and the rest, then changes nothing', async () => {
    const file = path.join(dir, 'sshd_config');
    const lines = Array.from({ length: 20 }, (_, i) => `Option${i} yes`);
    await fs.writeFile(file, `${lines.join('\n')}\n`, { mode: 0o600 });
    const params = { path: file, regexp: '^Option10 ', line: 'Option10 no' };
    const plan = await run('core.line.present', params, { dryRun: true, showContent: true } as never);
    assert.equal(plan.output, `would update ${file} (line 11 replaced) (dry run)`);
    assert.equal(
      (plan.diff as { unified: string }).unified,
      `--- a${file}\n+++ b${file}\n@@ -8,7 +8,7 @@\n Option7 yes\n Option8 yes\n Option9 yes\n-Option10 yes\n+Option10 no\n Option11 yes\n Option12 yes\n Option13 yes\n`,
    );
    assert.equal(await fs.readFile(file, 'utf8'), `${lines.join('\n')}\n`, 'a plan writes nothing');
    const done = await run('core.line.present', params);
    assert.deepEqual([done.ok, done.changed, done.output], [true, true, `updated ${file} (line 11 replaced)`]);
    assert.equal((await fs.stat(file)).mode & 0o7777, 0o600);
    assert.equal(await fs.readFile(file, 'utf8'), `${lines.join('\n').replace('Option10 yes', 'Option10 no')}\n`);
    const again = await run('core.line.present', params);
    assert.deepEqual([again.ok, again.changed, again.output], [true, false, `${file} already has the line`]);
    assert.equal((done.diff as Record<string, unknown>).unified, undefined, 'content only in a plan');
  });

  it('a missing file fails naming `create` (line, block) or is created (ini; line with create: true)', async () => {
    const file = path.join(dir, 'sub', 'app.ini');
    const line = await run('core.line.present', { path: file, line: 'x' });
    assert.deepEqual([line.ok, line.changed], [false, false]);
    assert.match(line.output, /does not exist; create it in an earlier step, or set param "create": true/);
    const ini = await run('core.ini.set', { path: file, section: 'main', key: 'port', value: 8080 });
    assert.deepEqual(
      [ini.ok, ini.changed, ini.output],
      [true, true, `created ${file} (section [main] added with key port)`],
    );
    assert.equal(await fs.readFile(file, 'utf8'), '[main]\nport = 8080\n');
    assert.equal((await fs.stat(file)).mode & 0o7777, 0o644);
    const absent = await run('core.line.absent', { path: path.join(dir, 'none'), line: 'x' });
    assert.deepEqual([absent.ok, absent.changed], [true, false]);
  });

  it('refuses bad params naming the param', async () => {
    const cases: Array<[string, unknown, RegExp]> = [
      [
        'core.line.present',
        { path: '/x', line: 'a', regexp: '(?P<x>a)' },
        /param "regexp" is not a valid JavaScript regular expression/,
      ],
      [
        'core.line.present',
        { path: '/x', line: 'a', insertafter: 'a', insertbefore: 'b' },
        /"insertafter" and "insertbefore" exclude each other/,
      ],
      ['core.line.present', { path: '/x', line: 'a\nb' }, /param "line" must be one line/],
      ['core.line.absent', { path: '/x' }, /give exactly one of params "regexp" .* and "line"/],
      [
        'core.block.present',
        { path: '/x', name: 'a', content: '', marker: '# x' },
        /param "marker" must be one line holding \{mark\}/,
      ],
      ['core.ini.set', { path: '/x', key: 'a=b', value: 'c' }, /param "key" must be a key name/],
      ['core.ini.set', { path: 'x', key: 'a', value: 'c' }, /param "path" must be absolute/],
    ];
    for (const [module, params, want] of cases) {
      const r = await run(module, params);
      assert.deepEqual([r.ok, r.changed], [false, false], module);
      assert.match(r.output, want);
      assert.match(r.output, new RegExp(`^${module.replace(/\./g, '\\.')}: invalid params: `));
    }
  });
});
