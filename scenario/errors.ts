/**
 * Every problem the scenario library reports, at load, lint or render time,
 * has one shape: where (file:line:col, 1-based), which rule, what, and how to
 * fix it. soul-lint findings and render errors share it so a CI failure and a
 * failed run read the same.
 */
export interface RenderError {
  /** Path relative to the service root, with forward slashes. */
  file: string;
  line: number;
  col: number;
  /** Stable rule id, e.g. `SL010`; the table is in docs/soul-lint.md. */
  rule: string;
  message: string;
  fix?: string;
}

export interface Position {
  file: string;
  line: number;
  col: number;
}

/** Thrown inside the library and turned into RenderError lists at the API edge. */
export class ScenarioError extends Error {
  constructor(
    readonly pos: Position,
    readonly rule: string,
    message: string,
    readonly fix?: string,
  ) {
    super(message);
    this.name = 'ScenarioError';
  }

  toRenderError(): RenderError {
    const e: RenderError = {
      file: this.pos.file,
      line: this.pos.line,
      col: this.pos.col,
      rule: this.rule,
      message: this.message,
    };
    if (this.fix !== undefined) e.fix = this.fix;
    return e;
  }
}

export function makeError(pos: Position, rule: string, message: string, fix?: string): RenderError {
  const e: RenderError = { file: pos.file, line: pos.line, col: pos.col, rule, message };
  if (fix !== undefined) e.fix = fix;
  return e;
}

/** `file:line:col rule message` — the one-line form used in logs and the text formatter. */
export function formatError(e: RenderError): string {
  return `${e.file}:${e.line}:${e.col} ${e.rule} ${e.message}${e.fix ? ` (fix: ${e.fix})` : ''}`;
}

/** Stable order: by file, then line, then column, then rule. */
export function sortErrors(errors: RenderError[]): RenderError[] {
  return errors.sort((a, b) =>
    a.file < b.file
      ? -1
      : a.file > b.file
        ? 1
        : a.line - b.line || a.col - b.col || (a.rule < b.rule ? -1 : a.rule > b.rule ? 1 : 0),
  );
}
