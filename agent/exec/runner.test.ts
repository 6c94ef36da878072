import assert from 'node:assert/strict';
import { createProcessRunner } from './runner';

describe('process runner', () => {
  const run = createProcessRunner({ timeoutMs: 10_000 });

  it('passes arguments verbatim: shell syntax in an argument is never interpreted', async () => {
    const r = await run({
      file: process.execPath,
      args: ['-e', 'process.stdout.write(JSON.stringify(process.argv.slice(1)))', '$(id); echo pwned', '`id`', '*'],
    });
    assert.equal(r.code, 0);
    assert.deepEqual(JSON.parse(r.stdout), ['$(id); echo pwned', '`id`', '*']);
  });

  it('resolves with a non-zero exit status and the output, adding env to the soul environment', async () => {
    const r = await run({
      file: process.execPath,
      args: [
        '-e',
        'process.stderr.write(process.env.KEEPER_TEST_VAR + " " + (process.env.PATH ? "path" : "nopath")); process.exit(3)',
      ],
      env: { KEEPER_TEST_VAR: 'set' },
    });
    assert.deepEqual(r, { code: 3, stdout: '', stderr: 'set path' });
  });

  it("starts every command in / unless a cwd is given (never in the soul's own folder)", async () => {
    const here = process.cwd();
    assert.notEqual(here, '/');
    const pwd = (cwd?: string) =>
      run({ file: '/bin/sh', args: ['-c', 'pwd'], ...(cwd === undefined ? {} : { cwd }) }).then((r) => r.stdout);
    assert.equal(await pwd(), '/\n');
    assert.equal(await pwd(here), `${here}\n`);
  });

  it('rejects with a clear message when the command does not exist', async () => {
    await assert.rejects(
      run({ file: 'keeper-no-such-command-xyz', args: [] }),
      /keeper-no-such-command-xyz: command not found on this host/,
    );
  });
});
