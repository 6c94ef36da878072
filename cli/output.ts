// How results reach the terminal: a human table by default, or the API's JSON/YAML for scripts.
import yaml from 'js-yaml';

export type OutputFormat = 'table' | 'json' | 'yaml';

export interface Column<T> {
  header: string;
  value(row: T): unknown;
}

function cell(v: unknown): string {
  if (v === null || v === undefined) return '-';
  if (Array.isArray(v)) return v.length === 0 ? '-' : v.map(cell).join(',');
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v).replace(/[\r\n\t]+/g, ' ');
}

/** A plain text table: a header line and one line per row, columns padded to their widest cell. */
export function table<T>(rows: readonly T[], columns: readonly Column<T>[]): string {
  const cells = rows.map((r) => columns.map((c) => cell(c.value(r))));
  const widths = columns.map((c, i) => Math.max(c.header.length, ...cells.map((r) => r[i]!.length)));
  const line = (vals: string[]) =>
    vals
      .map((v, i) => (i === vals.length - 1 ? v : v.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(columns.map((c) => c.header)), ...cells.map(line)].join('\n') + '\n';
}

/** Key: value lines for one object (a `get`), nested values as compact JSON. */
export function details(obj: Record<string, unknown>, keys?: readonly string[]): string {
  const ks = keys ?? Object.keys(obj);
  const w = Math.max(...ks.map((k) => k.length));
  return ks.map((k) => `${(k + ':').padEnd(w + 1)} ${cell(obj[k])}`).join('\n') + '\n';
}

export function render(format: OutputFormat, data: unknown, human: () => string): string {
  if (format === 'json') return JSON.stringify(data, null, 2) + '\n';
  if (format === 'yaml') return yaml.dump(data, { noRefs: true, lineWidth: 120 });
  return human();
}
