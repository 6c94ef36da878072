/**
 * A template function is registered with the Go parameter types it would
 * have in Go, because text/template checks and converts arguments by those
 * types (a literal `1` cannot be passed where a string is wanted, `nil` can
 * only go where a nil fits). The differential tests run the same functions
 * in Go (test/gotemplate/funcs.go) with these signatures.
 *
 * - `value`:  a reflect.Value parameter (the builtins): any value, nil included
 * - `any`:    interface{}: any value, `nil` allowed
 * - `string`, `int`: only that Go type
 */
export type ParamKind = 'value' | 'any' | 'string' | 'int';

export interface TemplateFunc {
  params: ParamKind[];
  /** Kind of the trailing variadic parameter, if any. */
  variadic?: ParamKind;
  /** `and`/`or`: arguments are evaluated lazily by the executor. */
  lazy?: boolean;
  /** Throws FuncError for an error result, as a Go function returning (v, error) would. */
  fn: (...args: unknown[]) => unknown;
}

export class FuncError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FuncError';
  }
}

export type FuncMap = ReadonlyMap<string, TemplateFunc>;
