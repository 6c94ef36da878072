/** Machine-readable findings: `{dir, findings: [{rule, name, severity, file, line, col, end_line, end_col, message, fix, suppressed}]}`. */
import type { Finding } from '../../scenario';
import { RULES_BY_ID } from '../rules';

export function formatJson(findings: Finding[], dir: string): string {
  const out = findings.map((f) => ({
    rule: f.rule,
    name: RULES_BY_ID.get(f.rule)?.name ?? null,
    severity: f.severity,
    file: f.file,
    line: f.line,
    col: f.col,
    end_line: f.endLine,
    end_col: f.endCol,
    message: f.message,
    fix: f.fix ?? null,
    suppressed: f.suppressed ?? null,
  }));
  return `${JSON.stringify({ dir, findings: out }, null, 2)}\n`;
}
