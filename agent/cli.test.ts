import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { resolveToken } from './cli';
import { parseSoulArgs } from './cli-args';

const stdin = (text: string | null, isTTY = false) => {
  const s = Readable.from(text === null ? [] : [Buffer.from(text)]) as any;
  s.isTTY = isTTY;
  return s;
};

describe('soul init token sources', () => {
  it('prefers the flag, then SOUL_BOOTSTRAP_TOKEN, then stdin', async () => {
    assert.equal(await resolveToken('kbt_flag', { SOUL_BOOTSTRAP_TOKEN: 'kbt_env' }, stdin('kbt_stdin')), 'kbt_flag');
    assert.equal(await resolveToken(undefined, { SOUL_BOOTSTRAP_TOKEN: 'kbt_env' }, stdin('kbt_stdin')), 'kbt_env');
    assert.equal(await resolveToken(undefined, {}, stdin('kbt_stdin\n')), 'kbt_stdin');
  });

  it('fails with the fix when there is no token anywhere', async () => {
    await assert.rejects(resolveToken(undefined, {}, stdin('')), /no bootstrap token/);
    await assert.rejects(resolveToken('', { SOUL_BOOTSTRAP_TOKEN: ' ' }, stdin(null, true)), (err: any) => {
      assert.equal(err.message, 'no bootstrap token');
      assert.match(err.fix, /--token=<token>, set SOUL_BOOTSTRAP_TOKEN, or pipe the token on stdin/);
      return true;
    });
  });
});

describe('soul command line', () => {
  it('reads a command and its options in either form, with defaults', () => {
    assert.deepEqual(parseSoulArgs(['run', '--config=/etc/soul/soul.yml']), {
      kind: 'command',
      command: 'run',
      options: { config: '/etc/soul/soul.yml' },
    });
    assert.deepEqual(parseSoulArgs(['init', '--config', 'c.yml', '--token', 'kbt_x']), {
      kind: 'command',
      command: 'init',
      options: { config: 'c.yml', token: 'kbt_x' },
    });
    assert.deepEqual(parseSoulArgs(['apply']), {
      kind: 'command',
      command: 'apply',
      options: { 'state-dir': '/var/lib/soul/ssh' },
    });
    assert.deepEqual(parseSoulArgs(['facts']), { kind: 'command', command: 'facts', options: {} });
  });

  it('refuses what it does not know, naming it', () => {
    const usage = (args: string[]) => {
      const p = parseSoulArgs(args);
      assert.equal(p.kind, 'usage');
      return (p as { message: string }).message;
    };
    assert.match(usage([]), /name a command: init, run, status, apply or facts/);
    assert.match(usage(['start']), /unknown command "start"/);
    assert.match(usage(['run']), /the run command needs --config=<config>/);
    assert.match(usage(['run', '--config=c.yml', '--confg=d.yml']), /the run command has no option --confg/);
    assert.match(usage(['facts', 'extra']), /the facts command takes no argument "extra"/);
    assert.match(usage(['run', '--config']), /the run command: .*argument missing/);
    assert.match(usage(['--config=c.yml', 'run']), /unknown option --config=c.yml \(options go after the command\)/);
  });

  it('answers --version and --help, for the soul and for each command', () => {
    assert.deepEqual(parseSoulArgs(['--version']), { kind: 'version' });
    const top = parseSoulArgs(['--help']);
    assert.equal(top.kind, 'help');
    for (const c of ['init', 'run', 'apply', 'facts'])
      assert.match((top as { text: string }).text, new RegExp(`soul ${c} `));
    const run = parseSoulArgs(['run', '--help']);
    assert.match(
      (run as { text: string }).text,
      /--config=<config>  path to the soul configuration \(YAML\) \[required\]/,
    );
  });
});
