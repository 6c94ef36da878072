import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { resolveToken } from './cli';

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
