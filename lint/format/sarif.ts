/**
 * SARIF 2.1.0 for code-scanning tools (GitHub's upload-sarif among them).
 * Every rule of the registry is listed under tool.driver.rules; results
 * point at the file relative to %SRCROOT%, the linted directory.
 */
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Finding } from '../../scenario';
import { RULES } from '../rules';

export const TOOL_VERSION = '0.1.0';

export function toSarif(findings: Finding[], dir: string): Record<string, unknown> {
  const index = new Map(RULES.map((r, i) => [r.id, i]));
  let root = pathToFileURL(path.resolve(dir)).href;
  if (!root.endsWith('/')) root += '/';
  return {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0',
    runs: [
      {
        tool: {
          driver: {
            name: 'soul-lint',
            version: TOOL_VERSION,
            informationUri: 'https://github.com/keeper/keeper/blob/main/docs/soul-lint.md',
            rules: RULES.map((r) => ({
              id: r.id,
              name: r.name,
              shortDescription: { text: r.description },
              fullDescription: { text: r.description },
              help: { text: r.help },
              defaultConfiguration: { level: 'error' },
            })),
          },
        },
        originalUriBaseIds: { SRCROOT: { uri: root } },
        results: findings.map((f) => ({
          ruleId: f.rule,
          ...(index.has(f.rule) ? { ruleIndex: index.get(f.rule) } : {}),
          level: f.severity === 'error' ? 'error' : 'warning',
          message: { text: f.fix ? `${f.message}. Fix: ${f.fix}` : f.message },
          locations: [
            {
              physicalLocation: {
                artifactLocation: { uri: f.file, uriBaseId: 'SRCROOT' },
                region: { startLine: f.line, startColumn: f.col, endLine: f.endLine, endColumn: f.endCol },
              },
            },
          ],
          ...(f.suppressed ? { suppressions: [{ kind: 'inSource', justification: f.suppressed.reason }] } : {}),
        })),
      },
    ],
  };
}

export function formatSarif(findings: Finding[], dir: string): string {
  return `${JSON.stringify(toSarif(findings, dir), null, 2)}\n`;
}
