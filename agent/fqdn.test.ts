import assert from 'node:assert/strict';
import { SoulError } from './errors';
import { findFqdn, isFqdn } from './fqdn';

describe('agent/fqdn', () => {
  it('takes a hostname with a dot as the FQDN, lowercased, without a trailing dot', async () => {
    assert.equal(await findFqdn('Soul-A.Keeper.Test.', async () => 'ignored.example'), 'soul-a.keeper.test');
  });

  it('asks the resolver for a short hostname and takes its canonical name', async () => {
    assert.equal(await findFqdn('soula', async () => 'soula.keeper.test'), 'soula.keeper.test');
  });

  it('refuses a short name the resolver cannot qualify, with the spec message', async () => {
    await assert.rejects(
      findFqdn('soula', async () => 'soula'),
      (err: unknown) => {
        assert.ok(err instanceof SoulError);
        assert.equal(err.message, 'the host name "soula" is not a fully-qualified domain name');
        assert.match(err.fix, /FQDN/);
        return true;
      },
    );
    await assert.rejects(
      findFqdn('soula', async () => undefined),
      /not a fully-qualified domain name/,
    );
  });

  it('checks label syntax', () => {
    assert.ok(isFqdn('a-1.keeper.test'));
    assert.ok(!isFqdn('a_1.keeper.test'));
    assert.ok(!isFqdn('-a.keeper.test'));
    assert.ok(!isFqdn('localhost'));
  });
});
