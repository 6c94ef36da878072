/**
 * Side-by-side measurement of the two CEL libraries on the design card:
 * conformance on the cel-spec test data (@bufbuild/cel-spec) and speed on
 * scenario-like expressions. Writes bench/results/cel.json and prints a
 * summary; the figures go into docs/scenario.md.
 *
 *   node dist/bench/cel/compare.js
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';

type Lib = {
  name: string;
  evaluate: (expr: string, ctx: Record<string, unknown>) => unknown;
  compile: (expr: string) => (ctx: Record<string, unknown>) => unknown;
  bigint: boolean;
};

interface SpecTest {
  original: {
    name?: string;
    expr: string;
    value?: Record<string, unknown>;
    evalError?: unknown;
    bindings?: Record<string, { value: Record<string, unknown> }>;
    [k: string]: unknown;
  };
}
interface Suite {
  name: string;
  suites?: Suite[];
  tests?: SpecTest[];
}

function libs(): Lib[] {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const m = require('@marcbachmann/cel-js') as {
    evaluate: Lib['evaluate'];
    parse: (e: string) => (c: Record<string, unknown>) => unknown;
  };
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const c = require('cel-js') as {
    evaluate: (e: unknown, c: Record<string, unknown>) => unknown;
    parse: (e: string) => { isSuccess: boolean; cst: unknown };
  };
  return [
    {
      name: '@marcbachmann/cel-js',
      evaluate: (e, ctx) => m.evaluate(e, ctx),
      compile: (e) => m.parse(e),
      bigint: true,
    },
    {
      name: 'cel-js',
      evaluate: (e, ctx) => c.evaluate(e, ctx),
      compile: (e) => {
        const p = c.parse(e);
        if (!p.isSuccess) throw new Error('parse');
        return (ctx) => c.evaluate(p.cst, ctx);
      },
      bigint: false,
    },
  ];
}

/** Expected value of a conformance test as a comparable JS value. */
function expected(v: Record<string, unknown>, bigint: boolean): unknown {
  if ('int64Value' in v || 'uint64Value' in v) {
    const s = String(v['int64Value'] ?? v['uint64Value']);
    return bigint ? BigInt(s) : Number(s);
  }
  if ('doubleValue' in v) return Number(v['doubleValue']);
  if ('stringValue' in v) return v['stringValue'];
  if ('boolValue' in v) return v['boolValue'];
  if ('nullValue' in v) return null;
  if ('bytesValue' in v) return Buffer.from(String(v['bytesValue']), 'base64');
  if ('listValue' in v)
    return ((v['listValue'] as { values?: Record<string, unknown>[] }).values ?? []).map((x) => expected(x, bigint));
  if ('mapValue' in v)
    return new Map(
      (
        (v['mapValue'] as { entries?: Array<{ key: Record<string, unknown>; value: Record<string, unknown> }> })
          .entries ?? []
      ).map((e) => [expected(e.key, bigint), expected(e.value, bigint)]),
    );
  throw new Error('unsupported');
}

function norm(v: unknown): unknown {
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'number') return Number.isNaN(v) ? 'NaN' : v;
  if (v instanceof Uint8Array) return `bytes:${Buffer.from(v).toString('base64')}`;
  if (Array.isArray(v)) return v.map(norm);
  if (v instanceof Map) return Object.fromEntries([...v].map(([k, x]) => [String(norm(k)), norm(x)]).sort());
  if (v && typeof v === 'object') {
    if ('value' in v && Object.keys(v).length === 1) return norm((v as { value: unknown }).value);
    return Object.fromEntries(
      Object.entries(v)
        .map(([k, x]) => [k, norm(x)])
        .sort(),
    );
  }
  return v;
}

function flatten(s: Suite, prefix: string, out: Array<{ section: string; t: SpecTest }>): void {
  for (const t of s.tests ?? []) out.push({ section: prefix, t });
  for (const c of s.suites ?? []) flatten(c, prefix || c.name, out);
}

function conformance(
  lib: Lib,
  tests: Array<{ section: string; t: SpecTest }>,
): { applicable: number; passed: number; bySection: Record<string, [number, number]> } {
  let applicable = 0;
  let passed = 0;
  const bySection: Record<string, [number, number]> = {};
  for (const { section, t } of tests) {
    const o = t.original;
    const raw = JSON.stringify(o);
    if (/objectValue|messageType|"container"|typeValue|enumValue|"unknown"|typeEnv/.test(raw)) continue;
    if (!o.value && !o.evalError) continue;
    let want: unknown;
    let ctx: Record<string, unknown> = {};
    try {
      if (o.value) want = expected(o.value, lib.bigint);
      ctx = Object.fromEntries(Object.entries(o.bindings ?? {}).map(([k, b]) => [k, expected(b.value, lib.bigint)]));
    } catch {
      continue;
    }
    applicable++;
    const s = (bySection[section] ??= [0, 0]);
    s[0]++;
    let ok = false;
    try {
      const got = lib.evaluate(o.expr, ctx);
      ok = !o.evalError && JSON.stringify(norm(got)) === JSON.stringify(norm(want));
    } catch {
      ok = Boolean(o.evalError);
    }
    if (ok) {
      passed++;
      s[1]++;
    }
  }
  return { applicable, passed, bySection };
}

const SPEED_EXPRS: Array<[string, Record<string, unknown>]> = [
  ['input.port + 1', {}],
  ['soulprint.self.os_family == "debian" && soulprint.self.cpus >= 2', {}],
  ['input.admins.exists(a, a == "ann")', {}],
  ['has(state.revision) ? state.revision + 1 : 1', {}],
  ['input.root + "/etc/motd"', {}],
];

function speed(lib: Lib): Record<string, number> {
  const ctx = (big: boolean) => ({
    input: { port: big ? 8080n : 8080, root: '/srv', admins: ['ann', 'bob'] },
    soulprint: { self: { os_family: 'debian', cpus: big ? 4n : 4 } },
    state: { revision: big ? 3n : 3 },
  });
  const out: Record<string, number> = {};
  const c = ctx(lib.bigint);
  let evalOps = 0;
  let parseOps = 0;
  for (const [expr] of SPEED_EXPRS) {
    const f = lib.compile(expr);
    for (let i = 0; i < 2000; i++) f(c);
    const n = 20_000;
    let t = performance.now();
    for (let i = 0; i < n; i++) f(c);
    evalOps += n / ((performance.now() - t) / 1000);
    const m = 2000;
    t = performance.now();
    for (let i = 0; i < m; i++) lib.evaluate(expr, c);
    parseOps += m / ((performance.now() - t) / 1000);
  }
  out['compiled_evals_per_sec'] = Math.round(evalOps / SPEED_EXPRS.length);
  out['parse_and_eval_per_sec'] = Math.round(parseOps / SPEED_EXPRS.length);
  return out;
}

function missingNameIsError(lib: Lib): boolean {
  try {
    lib.evaluate('input.nope', { input: {} });
    return false;
  } catch {
    return true;
  }
}

function main(): void {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const suite = (require('@bufbuild/cel-spec/testdata/conformance.js') as { tests: Suite }).tests;
  const tests: Array<{ section: string; t: SpecTest }> = [];
  flatten(suite, '', tests);
  const results = libs().map((lib) => {
    const conf = conformance(lib, tests);
    return { library: lib.name, conformance: conf, speed: speed(lib), missing_name_is_error: missingNameIsError(lib) };
  });
  const report = { node: process.version, total_conformance_tests: tests.length, results };
  const out = path.resolve(__dirname, '../../../bench/results/cel.json');
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, JSON.stringify(report, null, 2));
  for (const r of results) {
    console.log(
      `${r.library}: conformance ${r.conformance.passed}/${r.conformance.applicable} (${((100 * r.conformance.passed) / r.conformance.applicable).toFixed(1)}%), ` +
        `compiled ${r.speed['compiled_evals_per_sec']}/s, parse+eval ${r.speed['parse_and_eval_per_sec']}/s, missing name is error: ${r.missing_name_is_error}`,
    );
  }
  console.log(`written to ${out}`);
}

main();
