// The errors of one render, in a file of their own so that render.ts and the parts it calls
// (inputs.ts) share them without importing each other.
import { ScenarioError, sortErrors, type RenderError } from '../errors';

const MAX_ERRORS = 200;

/** Collects errors, deduplicated (the same error on 1,000 hosts is listed once per message) and capped. */
export class ErrorList {
  private readonly list: RenderError[] = [];
  private readonly seen = new Set<string>();

  add(e: RenderError): void {
    const key = `${e.file}:${e.line}:${e.col}:${e.rule}:${e.message.replace(/^on host \S+: /, '')}`;
    if (this.seen.has(key) || this.list.length >= MAX_ERRORS) return;
    this.seen.add(key);
    this.list.push(e);
  }

  guard<T>(fn: () => T): T | undefined {
    try {
      return fn();
    } catch (e) {
      if (e instanceof ScenarioError) {
        this.add(e.toRenderError());
        return undefined;
      }
      throw e;
    }
  }

  empty(): boolean {
    return this.list.length === 0;
  }
  full(): boolean {
    return this.list.length >= MAX_ERRORS;
  }
  sorted(): RenderError[] {
    return sortErrors([...this.list]);
  }
}
