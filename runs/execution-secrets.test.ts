import assert from 'node:assert/strict';
import { paramSecretOutside, withholdValidatorOutput } from './execution-secrets';

describe('execution secrets: role prefixes and validator output', () => {
  const WITHHELD = "; the live file is unchanged (the validator's output is withheld: the content holds a secret)";

  it('keeps only the exit status of a refusing validator, whatever it printed after or inside it', () => {
    assert.equal(
      withholdValidatorOutput(
        'core.file.present: apply failed: validate: sh refused the new content (exit 3); the live file is unchanged: terces\nline 2',
      ),
      `core.file.present: apply failed: validate: sh refused the new content (exit 3)${WITHHELD}`,
    );
    // The validator's own text repeating the soul's words cannot move the cut past the real exit status.
    assert.equal(
      withholdValidatorOutput(
        'validate: /bin/x refused the new content (exit 1); the live file is unchanged: validate: y refused the new content (exit 0) terces',
      ),
      `validate: /bin/x refused the new content (exit 1)${WITHHELD}`,
    );
    // Any other failure is left as the soul said it (scrubbed of values elsewhere).
    assert.equal(
      withholdValidatorOutput('core.file.present: owner nobody2 does not exist'),
      'core.file.present: owner nobody2 does not exist',
    );
  });

  it('finds the first reference outside every prefix of the role, by whole path segments', () => {
    const prefixes = ['secret/keeper/services/web/'];
    assert.equal(paramSecretOutside({ content: 'secretstore:secret/keeper/services/web/api#token' }, prefixes), null);
    assert.deepEqual(paramSecretOutside({ argv: ['x', 'secretstore:secret/keeper/services/webhooks/a#b'] }, prefixes), {
      pointer: '/argv/1',
      path: 'secretstore:secret/keeper/services/webhooks/a',
    });
    assert.deepEqual(paramSecretOutside({ 'a/b': { c: 'secretstore:secret/keeper/services/web/x#y' } }, []), {
      pointer: '/a~1b/c',
      path: 'secretstore:secret/keeper/services/web/x',
    });
    assert.equal(paramSecretOutside({ content: 'plain text' }, []), null);
  });
});
