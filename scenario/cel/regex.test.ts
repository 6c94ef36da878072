// CEL `matches` is RE2, as the CEL spec defines it: a partial match, RE2 syntax (no backreferences,
// no lookaround), linear time. The review's probe (issue 45, H-4) answers in milliseconds; a pattern
// RE2 refuses, or a pattern or string over its limit, fails naming the rule; the checker reports a
// literal bad pattern offline with its offset; the work of a match is charged to the cost budget.
import * as assert from 'node:assert/strict';
import { RE2JS } from 're2js';
import { evaluateExpression, ExpressionError } from './evaluate';
import { checkExpression } from './env';
import { compileExpression } from './program';
import { estimatedProgramSize, matchCost } from './regex';
import { LIMITS } from '../limits';

const SCOPE = { inputs: new Map(), soulprint: true, state: false, registered: [], result: false };

function matches(subject: string, pattern: string): unknown {
  return evaluateExpression('input.s.matches(input.p)', { input: { s: subject, p: pattern } });
}

function refusal(fn: () => unknown): ExpressionError {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof ExpressionError, String(e));
    return e;
  }
  assert.fail('expected the expression to be refused');
}

describe('CEL matches (RE2)', function () {
  it("answers the review's catastrophic-backtracking probe in milliseconds, and 30 more `a`s change nothing", function () {
    for (const n of [24, 54]) {
      const src = `'${'a'.repeat(n)}!'.matches('^(a+)+$')`;
      const start = performance.now();
      assert.equal(evaluateExpression(src, {}), false);
      const took = performance.now() - start;
      // JavaScript's RegExp takes seconds at 24 and doubles with every `a`; RE2 is linear.
      assert.ok(took < 200, `took ${took.toFixed(1)} ms at ${n} characters`);
    }
    assert.equal(evaluateExpression(`'${'a'.repeat(54)}'.matches('^(a+)+$')`, {}), true);
  });

  it('is a partial match: true when the pattern matches any part; anchors make it a whole match', function () {
    assert.equal(matches('debian-12', 'bian'), true);
    assert.equal(matches('debian-12', '^bian'), false);
    assert.equal(matches('debian-12', '^debian-\\d+$'), true);
    assert.equal(matches('debian-12', '^debian$'), false);
    assert.equal(matches('', ''), true);
    assert.equal(matches('web-01.prod', '\\.prod$'), true);
    assert.equal(matches('WEB', '(?i)web'), true);
    assert.equal(matches('WEB', 'web'), false);
    assert.equal(matches('a\nb', '^b'), false, 'without (?m), ^ is the start of the text');
    assert.equal(matches('a\nb', '(?m)^b$'), true);
    assert.equal(matches('a\nb', 'a.b'), false, 'without (?s), . does not match a newline');
  });

  it('speaks RE2 syntax JavaScript lacks: (?P<name>...), \\pL, [[:alpha:]], \\Q...\\E, \\z', function () {
    assert.equal(matches('ab', '(?P<first>a)b'), true);
    assert.equal(matches('été', '^\\pL+$'), true);
    assert.equal(matches('abc', '^[[:alpha:]]+$'), true);
    assert.equal(matches('1.2.3', '^\\Q1.2\\E'), true);
    assert.equal(matches('1x2', '^\\Q1.2\\E'), false);
    assert.equal(matches('end\n', 'end\\z'), false);
  });

  it('refuses what RE2 refuses (backreference, lookahead, lookbehind) naming the rule', function () {
    for (const pattern of ['(a)\\1', 'a(?=b)', '(?<!a)b', 'a{1001}', '(']) {
      const e = refusal(() => matches('aab', pattern));
      assert.equal(e.kind, 'eval');
      assert.equal(e.refused, true, 'a refused pattern is the expression’s fault, not a non-match');
      assert.match(e.message, /^CEL evaluation error: matches: the pattern .* is not valid RE2 syntax \(/, pattern);
    }
    assert.match(refusal(() => matches('aa', '(a)\\1')).message, /invalid escape sequence: `\\1`.*no backreferences/);
  });

  it('caps the pattern and the string, naming the limit', function () {
    const long = refusal(() => matches('a', 'a'.repeat(LIMITS.maxRegexPatternLength + 1)));
    assert.match(long.message, new RegExp(`pattern is longer than ${LIMITS.maxRegexPatternLength} characters`));
    assert.equal(matches('a', 'a'.repeat(LIMITS.maxRegexPatternLength)), false, 'at the limit it still runs');
    const subject = refusal(() => matches('a'.repeat(LIMITS.maxRegexSubjectLength + 1), 'a'));
    assert.match(subject.message, new RegExp(`string is longer than ${LIMITS.maxRegexSubjectLength} characters`));
    assert.equal(subject.refused, true);
    assert.equal(matches(`${'b'.repeat(LIMITS.maxRegexSubjectLength - 1)}a`, 'a$'), true, 'at the limit it still runs');
    // 799 characters that RE2 would compile into 100,000 instructions (600 ms) are refused before compiling.
    const big = Array.from({ length: 100 }, (_, i) => `${String.fromCharCode(97 + (i % 26))}{1000}`).join('|');
    const start = performance.now();
    assert.match(
      refusal(() => matches('a', big)).message,
      /is too large \(a regular expression compiles to at most 5000/,
    );
    assert.ok(performance.now() - start < 100, 'refused without compiling');
  });

  it('charges a match its size to the cost budget: a large pattern over a large string is stopped before it runs', function () {
    // 64 KiB times a 3,000-instruction program is some 190 million steps (seconds) in RE2's worst case.
    const subject = `${'ab'.repeat(32768 - 1)}c`;
    const pattern = '(?:[ab]?){500}[ab]{500}c';
    const start = performance.now();
    const e = refusal(() => matches(subject, pattern));
    assert.match(e.message, /exceeded its cost budget of 500000 units/);
    assert.equal(e.refused, true);
    assert.ok(performance.now() - start < 200, `refused in ${(performance.now() - start).toFixed(1)} ms`);
    // The same pattern over a host-sized string is cheap and runs.
    assert.equal(matches('ab'.repeat(600) + 'c', pattern), true);
    assert.ok(matchCost(65536, 3000) > LIMITS.maxExpressionCost);
  });

  it('the worst match the budget admits stays well within the time budget', function () {
    // The largest program a 64 KiB string may meet: the cost budget's share of the string's length.
    const size = Math.floor((LIMITS.maxExpressionCost * 32) / 65536);
    const pattern = `(?:[ab]?){${Math.floor(size / 4)}}[ab]{${Math.floor(size / 4)}}c`;
    const subject = `${'ab'.repeat(32767)}c`;
    const start = performance.now();
    assert.equal(matches(subject, pattern), true);
    const took = performance.now() - start;
    assert.ok(took < LIMITS.maxExpressionMillis / 2, `took ${took.toFixed(1)} ms`);
  });

  it('a refused pattern is still an error CEL logic may absorb (`||`), as any CEL error is', function () {
    assert.equal(evaluateExpression('input.s.matches(input.p) || true', { input: { s: 'a', p: '(a)\\1' } }), true);
  });

  it('the checker reports a literal pattern RE2 refuses with its offset, before any evaluation', function () {
    const p = checkExpression("soulprint.self.hostname.matches('^(web)\\\\1$')", SCOPE);
    assert.equal(p?.kind, 'syntax');
    assert.equal(p?.offset, 32);
    assert.match(p!.message, /not valid RE2 syntax/);
    const nested = checkExpression("soulprint.self.packages.exists(x, x.name.matches('a(?=b)'))", SCOPE);
    assert.match(nested!.message, /not valid RE2/);
    assert.equal(checkExpression("soulprint.self.hostname.matches('^web-\\\\d+$')", SCOPE), null);
    assert.throws(() => compileExpression("soulprint.self.hostname.matches('(?<=a)b')", SCOPE), /not valid RE2/);
  });

  it('the size estimate never falls below the compiled size', function () {
    const patterns = [
      'a',
      '^(a+)+$',
      '(abc){10}',
      '(?:abc){10,20}',
      'a{3,}',
      '(a|bc|def)*x?y+',
      '[a-z]{100}',
      '(?:[ab]?){500}[ab]{500}c',
      '(?i)(?P<n>web|db)-\\d{2,4}\\.(?:prod|stage)$',
      '((a{5}){5}){5}',
      '\\pL{100}\\p{Greek}{10}\\x{41}{10}',
      '[[:alpha:]]{50}|[^\\]]{50}',
      '\\Q{1000}\\E{10}',
      '(a*)*(b+)+(c?)?',
      '(?s).{0,100}',
      '(?:(?:a|b){2}){10}',
    ];
    for (const p of patterns) {
      const real = RE2JS.compile(p).programSize();
      assert.ok(estimatedProgramSize(p) >= real, `${p}: estimate ${estimatedProgramSize(p)} < compiled ${real}`);
    }
  });
});
