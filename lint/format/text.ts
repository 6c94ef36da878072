/** `file:line:col  severity  RULE (name)  message` lines, then the fix indented, then a summary.
 *  Findings suppressed inline are not listed, only counted. */
import type { Finding } from '../../scenario';
import { RULES_BY_ID } from '../rules';

export function formatText(findings: Finding[], dir: string): string {
  const shown = findings.filter((f) => !f.suppressed);
  const suppressed = findings.length - shown.length;
  const tail = suppressed > 0 ? `; ${suppressed} suppressed inline` : '';
  if (shown.length === 0) return `soul-lint: ${dir}: no problems found${tail}\n`;
  const lines = shown.map((f) => {
    const name = RULES_BY_ID.get(f.rule)?.name;
    return `${f.file}:${f.line}:${f.col}  ${f.severity}  ${f.rule}${name ? ` (${name})` : ''}  ${f.message}${f.fix ? `\n    fix: ${f.fix}` : ''}`;
  });
  const errors = shown.filter((f) => f.severity === 'error').length;
  return `${lines.join('\n')}\n\n${errors} error(s), ${shown.length - errors} warning(s) in ${dir}${tail}\n`;
}
