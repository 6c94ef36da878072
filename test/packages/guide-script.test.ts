// The extractor of docs/install.md's marked command blocks (guide-script.ts): what the guide test
// runs in the Debian roots is exactly the guide's text, and a guide that lost a marked block fails
// here, naming the role, rather than silently testing less.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../support/repo';
import { guideScripts, installGuideScripts } from './guide-script';

const guide = () => fs.readFileSync(path.join(repoRoot(), 'docs', 'install.md'), 'utf8');

describe('the install guide as scripts (guide-script.ts)', () => {
  it("docs/install.md yields a script per role, verbatim from the guide's marked blocks", () => {
    const s = installGuideScripts();
    assert.match(s['keeper-1'], /^apt install \.\/keeper_\S+_amd64\.deb\n/);
    assert.match(s['keeper-1'], /\nrunuser -u keeper -- keeper init --archon=alice /);
    assert.match(s['keeper-1'], /\nsystemctl enable --now keeper\n$/);
    assert.doesNotMatch(s['keeper-2'], /keeper init --/, 'the second keeper is not initialized again');
    assert.match(s['keeper-2'], /\nsystemctl enable --now keeper\s/);
    assert.match(s.soul, /^apt install \.\/soul_\S+_amd64\.deb\n/);
    assert.match(s.soul, /\nsoul init --config=\/etc\/soul\/soul\.yml --token="\$TOKEN"/);
    assert.match(s.soul, /\nsystemctl enable --now soul\n$/);
    for (const script of Object.values(s)) {
      assert.doesNotMatch(script, /```|<!--/, 'no markdown in a script');
      for (const line of script.trim().split('\n')) assert.ok(guide().includes(line), `"${line}" is the guide's line`);
    }
  });

  it('a guide whose marked block for a role is gone fails, naming the role', () => {
    const text = guide().replace('<!-- guide: keeper-2 -->\n', '');
    assert.throws(() => guideScripts(text), /no command block marked for keeper-2 /);
    assert.throws(() => guideScripts(guide().replace('<!-- guide: soul -->', '')), /no command block marked for soul /);
  });

  it('a marker not followed by a sh block, or naming an unknown role, fails with its line', () => {
    assert.throws(
      () => guideScripts('<!-- guide: soul -->\nsome prose\n```sh\nsoul init\n```\n'),
      /docs\/install\.md:1: guide marker for soul is not followed by a ```sh block/,
    );
    assert.throws(
      () => guideScripts('intro\n<!-- guide: keeper-3 -->\n```sh\nkeeper run\n```\n'),
      /docs\/install\.md:2: guide marker names role "keeper-3"/,
    );
    assert.throws(() => guideScripts('<!-- guide: soul -->\n```sh\nsoul init\n'), /the soul block is never closed/);
  });

  it('several blocks of one role are joined in order; blank lines between marker and block are allowed', () => {
    const s = guideScripts(
      [
        '<!-- guide: keeper-1 -->',
        '```sh',
        'echo one',
        '```',
        '<!-- guide: keeper-2 -->',
        '',
        '```sh',
        'echo two',
        '```',
        '<!-- guide: soul -->',
        '```sh',
        'echo soul',
        '```',
        'unmarked:',
        '```sh',
        'rm -rf /',
        '```',
        '<!-- guide: keeper-1 -->',
        '```sh',
        'echo three',
        '```',
      ].join('\n'),
    );
    assert.deepEqual(s, { 'keeper-1': 'echo one\necho three\n', 'keeper-2': 'echo two\n', soul: 'echo soul\n' });
  });
});
