/** `file:line:col  RULE  message` lines, then the fix indented, then a summary. */
import type { Finding } from '../../scenario';

export function formatText(findings: Finding[], dir: string): string {
  if (findings.length === 0) return `soul-lint: ${dir}: no problems found\n`;
  const lines = findings.map((f) => `${f.file}:${f.line}:${f.col}  ${f.severity}  ${f.rule}  ${f.message}${f.fix ? `\n    fix: ${f.fix}` : ''}`);
  const errors = findings.filter((f) => f.severity === 'error').length;
  return `${lines.join('\n')}\n\n${errors} error(s), ${findings.length - errors} warning(s) in ${dir}\n`;
}
