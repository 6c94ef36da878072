// The install guide as scripts: docs/install.md marks the command blocks an operator runs on each
// host with an HTML comment on the line before the block (`<!-- guide: keeper-1 -->`, invisible when
// the guide is rendered), and test/packages/guide.test.ts runs what this extracts in clean Debian
// roots, so the guide cannot drift from what works. Only marked ```sh blocks are taken, verbatim:
// the variables they use (`$TOKEN`) and the one interactive line (`editor <file>`) are filled by the
// test, as the guide's "Variables" paragraph says.
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../support/repo';

/** The roles the guide must have a block for, in the order an operator meets them. */
export const GUIDE_ROLES = ['keeper-1', 'keeper-2', 'soul'] as const;
export type GuideRole = (typeof GUIDE_ROLES)[number];

const MARKER = /^<!--\s*guide:\s*([a-z0-9-]+)\s*-->\s*$/;

/**
 * The shell script of each role: its marked blocks joined in the guide's order. Throws, naming the
 * role and the file, when a required role has no block, a marker is not followed by a ```sh block,
 * or a marker names a role nobody runs.
 */
export function guideScripts(markdown: string, file = 'docs/install.md'): Record<GuideRole, string> {
  const lines = markdown.split('\n');
  const blocks = new Map<string, string[]>();
  for (let i = 0; i < lines.length; i++) {
    const m = MARKER.exec(lines[i]!);
    if (!m) continue;
    const role = m[1]!;
    if (!(GUIDE_ROLES as readonly string[]).includes(role))
      throw new Error(`${file}:${i + 1}: guide marker names role "${role}"; the roles are ${GUIDE_ROLES.join(', ')}`);
    // The block starts on the next non-blank line, or the marker is misplaced.
    let j = i + 1;
    while (j < lines.length && lines[j]!.trim() === '') j++;
    if (lines[j] !== '```sh')
      throw new Error(`${file}:${i + 1}: guide marker for ${role} is not followed by a \`\`\`sh block`);
    const body: string[] = [];
    for (j++; j < lines.length && lines[j] !== '```'; j++) body.push(lines[j]!);
    if (j === lines.length) throw new Error(`${file}:${i + 1}: the ${role} block is never closed`);
    blocks.set(role, [...(blocks.get(role) ?? []), ...body]);
    i = j;
  }
  const missing = GUIDE_ROLES.filter((r) => !blocks.has(r));
  if (missing.length > 0)
    throw new Error(
      `${file}: no command block marked for ${missing.join(', ')} (a \`<!-- guide: ${missing[0]} -->\` line before its \`\`\`sh block)`,
    );
  return Object.fromEntries(GUIDE_ROLES.map((r) => [r, `${blocks.get(r)!.join('\n')}\n`])) as Record<GuideRole, string>;
}

/** The scripts of this checkout's docs/install.md. */
export function installGuideScripts(): Record<GuideRole, string> {
  return guideScripts(fs.readFileSync(path.join(repoRoot(), 'docs', 'install.md'), 'utf8'));
}
