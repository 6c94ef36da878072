/**
 * CEL's `matches` with the semantics the CEL spec gives it: RE2 syntax, a partial match (true when
 * the pattern matches any part of the string, as RE2's PartialMatch; anchor with `^...$` for a whole
 * match), in time linear in the subject. cel-js implements it with JavaScript's backtracking RegExp,
 * where `'aaaaaaaaaaaaaaaaaaaaaaaa!'.matches('^(a+)+$')` doubles its time with every `a` and blocks the
 * keeper's one thread (issue 45, H-4); the cost budget (budget.ts) counts nodes and cannot see inside
 * one call. Here the pattern is compiled by re2js (a port of RE2: no backtracking, no backreferences
 * or lookaround) and the work of one call, the subject's length times the compiled program's size,
 * is charged to the evaluation's cost budget before the match runs.
 *
 * cel-js registers `string.matches(string)` on its global registry with a frozen declaration and
 * refuses a second overload, so the RE2 matcher is installed by giving the declared handler its own
 * `apply`: cel-js calls every function handler through `handler.apply(evaluator, args)`. A probe at
 * load checks that both the typed and the dyn call paths reach RE2, and refuses to load otherwise: a
 * cel-js that calls the handler differently must not silently bring the backtracking matcher back.
 */
import { Environment } from '@marcbachmann/cel-js';
import { RE2JS, RE2JSException } from 're2js';
import { LruMap } from '../../common/lru';
import { LIMITS } from '../limits';
import { charge } from './budget';

/** A `matches` call refused: an invalid RE2 pattern or a pattern or subject over its limit. */
export class CelRegexError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CelRegexError';
  }
}

// A compiled pattern or the reason it is refused; both are worth remembering, since a refused
// pattern evaluated over every soul of a fact query would otherwise be parsed once per soul.
const compiled = new LruMap<string, RE2JS | CelRegexError>(512);

function quoted(pattern: string): string {
  return JSON.stringify(pattern.length > 60 ? `${pattern.slice(0, 59)}…` : pattern);
}

/**
 * An upper bound on the instructions RE2 compiles `pattern` into, read from its text. A counted
 * repetition copies its operand (`(abc…){1000}` is a thousand copies), so a 1 KiB pattern can
 * compile into 800,000 instructions and take over a second before its size could be read from the
 * compiled program. Every atom counts one, a group the sum of its alternatives (and two to
 * capture), `*`, `+` and `?` two, `{n,m}` multiplies its operand by its largest count (plus a split
 * per optional copy). It overestimates (RE2 folds `(a|b)` into one class) and is meant never to
 * underestimate (regex.test.ts compares it with compiled sizes), so a pattern within it compiles
 * quickly.
 */
export function estimatedProgramSize(pattern: string): number {
  // Each open group: the size of its finished alternatives and of the current one, and the size of
  // the current alternative's last atom (what a repetition applies to).
  const stack: { done: number; cur: number; last: number }[] = [{ done: 0, cur: 0, last: 0 }];
  const top = () => stack[stack.length - 1]!;
  const atom = (size: number) => {
    const t = top();
    t.cur += size;
    t.last = size;
  };
  let i = 0;
  const n = pattern.length;
  while (i < n) {
    const c = pattern[i]!;
    if (c === '\\') {
      const e = pattern[i + 1];
      if (e === 'Q') {
        const end = pattern.indexOf('\\E', i + 2);
        const lit = end < 0 ? n - (i + 2) : end - (i + 2);
        top().cur += lit;
        top().last = 1;
        i = end < 0 ? n : end + 2;
        continue;
      }
      if ((e === 'p' || e === 'P' || e === 'x') && pattern[i + 2] === '{') {
        const end = pattern.indexOf('}', i + 3);
        i = end < 0 ? n : end + 1;
      } else i += e === 'p' || e === 'P' ? 3 : 2;
      atom(1);
      continue;
    }
    if (c === '[') {
      // A class is one instruction; skip to its closing `]` (a `]` first, or escaped, is literal).
      let j = i + 1;
      if (pattern[j] === '^') j++;
      if (pattern[j] === ']') j++;
      while (j < n && pattern[j] !== ']') {
        if (pattern[j] === '\\') j += 2;
        else if (pattern[j] === '[' && pattern[j + 1] === ':') {
          const end = pattern.indexOf(':]', j + 2);
          j = end < 0 ? j + 1 : end + 2;
        } else j++;
      }
      i = j + 1;
      atom(1);
      continue;
    }
    if (c === '(') {
      // `(?flags)` alone sets flags and is no group; `(?:`, `(?P<name>`, `(?<name>`, `(?i:` open one.
      const flags = /^\(\?[a-zA-Z-]*\)/.exec(pattern.slice(i, i + 16));
      if (flags) {
        i += flags[0].length;
        continue;
      }
      // A capturing group adds its two capture instructions; `(?:` and `(?flags:` add none.
      stack.push({
        done: 0,
        cur: pattern[i + 1] === '?' && !/^\(\?P?</.test(pattern.slice(i, i + 4)) ? 0 : 2,
        last: 0,
      });
      i++;
      continue;
    }
    if (c === ')') {
      if (stack.length > 1) {
        const g = stack.pop()!;
        atom(g.done + g.cur);
      }
      i++;
      continue;
    }
    if (c === '|') {
      const t = top();
      t.done += t.cur + 1;
      t.cur = 0;
      t.last = 0;
      i++;
      continue;
    }
    if (c === '*' || c === '+' || c === '?') {
      top().cur += 2;
      i++;
      continue;
    }
    if (c === '{') {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i, i + 24));
      if (m) {
        // `x{n}` is n copies of x; `x{n,m}` adds m-n optional copies (a split each); `x{n,}` a loop.
        const lo = Number(m[1]);
        const hi = m[2] === undefined ? lo : m[3] ? Number(m[3]) : lo;
        const copies = Math.max(lo, hi, 1);
        const extra = (hi > lo ? hi - lo : 0) + (m[2] !== undefined && !m[3] ? 1 : 0);
        const t = top();
        // The operand is already counted once.
        t.cur += t.last * (copies - 1) + extra;
        t.last = t.last * copies + extra;
        i += m[0].length;
        continue;
      }
    }
    atom(1);
    i++;
  }
  let total = 0;
  for (const g of stack) total += g.done + g.cur;
  return total + 2;
}

/** The compiled pattern, or the CelRegexError naming why it is refused (syntax or a limit). */
function compile(pattern: string): RE2JS | CelRegexError {
  let hit = compiled.get(pattern);
  if (hit !== undefined) return hit;
  hit = compileUncached(pattern);
  compiled.set(pattern, hit);
  return hit;
}

function compileUncached(pattern: string): RE2JS | CelRegexError {
  if (pattern.length > LIMITS.maxRegexPatternLength) {
    return new CelRegexError(
      `matches: the pattern is longer than ${LIMITS.maxRegexPatternLength} characters (the limit of a regular expression)`,
    );
  }
  const limit = `a regular expression compiles to at most ${LIMITS.maxRegexProgramSize} instructions; a counted repetition such as {1000} copies its operand`;
  if (estimatedProgramSize(pattern) > LIMITS.maxRegexProgramSize) {
    return new CelRegexError(`matches: the pattern ${quoted(pattern)} is too large (${limit})`);
  }
  let re: RE2JS;
  try {
    re = RE2JS.compile(pattern);
  } catch (e) {
    if (!(e instanceof RE2JSException)) throw e;
    const why = e.message.replace(/^error parsing regexp: /, '');
    return new CelRegexError(
      `matches: the pattern ${quoted(pattern)} is not valid RE2 syntax (${why}); RE2 has no backreferences or lookaround`,
    );
  }
  if (re.programSize() > LIMITS.maxRegexProgramSize) {
    return new CelRegexError(`matches: the pattern ${quoted(pattern)} is too large (${limit})`);
  }
  return re;
}

/** Why a literal pattern would be refused at evaluation, or null: the offline check's view. */
export function patternProblem(pattern: string): string | null {
  const re = compile(pattern);
  return re instanceof CelRegexError ? re.message : null;
}

/**
 * How many units of the CEL cost budget one match costs: RE2's worst case visits every instruction
 * of the program at every character (about 11 ns each, measured on a 65,536-character subject
 * with a 7,000-instruction program: 5 s), so a unit is 32 of those. The whole budget
 * (LIMITS.maxExpressionCost) then bounds one evaluation's matching to some 16 million steps.
 */
export function matchCost(subjectLength: number, programSize: number): number {
  return Math.ceil((subjectLength * programSize) / 32);
}

/** `subject.matches(pattern)`: RE2 partial match. Throws CelRegexError for a refused pattern or subject. */
export function re2Matches(subject: string, pattern: string): boolean {
  if (subject.length > LIMITS.maxRegexSubjectLength) {
    throw new CelRegexError(
      `matches: the string is longer than ${LIMITS.maxRegexSubjectLength} characters (the limit of a string matched by a regular expression)`,
    );
  }
  const re = compile(pattern);
  if (re instanceof CelRegexError) throw re;
  charge(matchCost(subject.length, re.programSize()));
  return re.test(subject);
}

function install(): void {
  const probe = new Environment({}).parse("'a'.matches('a')") as unknown as {
    check(): { valid: boolean };
    ast: { candidates?: Iterable<{ signature: string; handler: object }> };
  };
  probe.check();
  let handler: object | undefined;
  for (const d of probe.ast.candidates ?? []) if (d.signature === 'string.matches(string): bool') handler = d.handler;
  if (handler === undefined)
    throw new Error('cel-js has no string.matches(string) handler: RE2 matches cannot be installed');
  Object.defineProperty(handler, 'apply', {
    value: function re2Apply(_this: unknown, args: unknown[]) {
      return re2Matches(args[0] as string, args[1] as string);
    },
  });
  // `(?P<n>a)` is RE2 syntax JavaScript refuses; `(a)\1` a backreference RE2 refuses.
  const env = new Environment({ unlistedVariablesAreDyn: true });
  const typed = env.evaluate("'a'.matches('(?P<n>a)')");
  const dyn = env.evaluate('s.matches(p)', { s: 'a', p: '(?P<n>a)' });
  let refused = false;
  try {
    env.evaluate("'aa'.matches('(a)\\\\1')");
  } catch (e) {
    refused = e instanceof CelRegexError;
  }
  if (typed !== true || dyn !== true || !refused) {
    throw new Error('cel-js does not call the installed RE2 matches: refusing the backtracking matcher');
  }
}

install();
