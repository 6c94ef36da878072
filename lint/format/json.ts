/** Machine-readable findings: `{dir, findings: [{rule, severity, file, line, col, message, fix}]}`. */
import type { Finding } from '../../scenario';

export function formatJson(findings: Finding[], dir: string): string {
  const out = findings.map((f) => ({ rule: f.rule, severity: f.severity, file: f.file, line: f.line, col: f.col, message: f.message, fix: f.fix ?? null }));
  return `${JSON.stringify({ dir, findings: out }, null, 2)}\n`;
}
