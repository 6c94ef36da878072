// The keeperctl commands a doc shows, read from its markdown, for the walks that run them as written
// (docs-walk.test.ts: docs/cli.md's quick start; docs-walk-lifecycle.test.ts: plans, versions, drift).
import assert from 'node:assert/strict';

/** The `keeperctl ...` lines of a ```sh block's text, comments cut. */
export function shCommands(block: string): string[] {
  return block
    .split('\n')
    .map((l) => l.replace(/\s+#.*$/, '').trim())
    .filter((l) => l.startsWith('keeperctl '));
}

/** The text of the first ```sh block of the section `## <title>`; fails naming what is missing. */
export function sectionShBlock(markdown: string, doc: string, title: string): string {
  const section = new RegExp(`^## ${title}\\n([\\s\\S]*?)(?=^## )`, 'm').exec(markdown)?.[1];
  assert.ok(section, `${doc} has a "## ${title}" section`);
  const block = /^```sh\n([\s\S]*?)^```$/m.exec(section)?.[1];
  assert.ok(block, `the section "${title}" of ${doc} has a \`\`\`sh block`);
  return block;
}

/** Every `keeperctl ...` command of a doc, once: lines of its ```sh blocks and its inline code spans. */
export function docCommands(markdown: string): string[] {
  const found: string[] = [];
  for (const block of markdown.matchAll(/^```sh\n([\s\S]*?)^```$/gm)) found.push(...shCommands(block[1]));
  const prose = markdown.replace(/^```[\s\S]*?^```$/gm, '');
  for (const span of prose.matchAll(/`([^`]+)`/g)) {
    const c = span[1].replace(/\s+/g, ' ').trim();
    if (c.startsWith('keeperctl ')) found.push(c);
  }
  return [...new Set(found)];
}

/** Shell-like words: double quotes group, as a shell would read the doc's line. */
export function words(cmd: string): string[] {
  return [...cmd.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2]);
}
