// Property-based fuzzing of every route in the route table (issue 3, "Checked by"): at least 1,000
// generated requests per route, mixing junk with near-valid input (valid values for most fields,
// junk in one), odd content types and deep nesting. Every answer must be below 500, every invalid
// input a 4xx problem, and the registries must stay byte-for-byte unchanged by all of it.
//
// The requests of a route go in batches of BATCH at once (one fast-check case is a batch), and the
// registries are fingerprinted after each batch: most of a request's time is waiting on PostgreSQL
// (the activity row of every mutating call, the operator's access read, the fingerprint), which
// overlaps when requests run side by side. None of these requests may change the registries, so
// running them together proves what one by one did, but for the case below; if a batch changes
// them, it is replayed one request at a time on a fresh keeper to name the request that did.
// What a fingerprint per request would see and this does not: a change undone by a later request
// of the same batch and route before the batch's fingerprint (rows that keep updated_at rarely
// come back byte for byte).
// Same machine, same session, interleaved (2 shared cores, load 3-5), the 46 routes' tests: one by
// one 358 s and 224 s, in batches of 16 88 s and 71 s (a route's 1,000 requests in 1.5-2 s).
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { allRoutes } from '../../api/routes';
import type { RouteDef } from '../../api/route';
import { compileValidator } from '../../api/validate';
import { startTestKeeper, type TestKeeper } from '../support/keeper';
import { serviceRepo } from '../support/service-repo';
import { type Answer, call, registryFingerprint } from './helpers';

const RUNS = Number(process.env.KEEPER_FUZZ_RUNS ?? 1000);
/** Requests sent at once; fast-check runs RUNS / BATCH batches, each shrinkable and seeded. */
const BATCH = 16;
/** Registration clones and lints: a valid service is a real (local) repository. */
const REPO = serviceRepo({ tags: ['main-tag'] });

/** Valid values per field name, so generated inputs are often valid in all fields but one. */
const VALID: Record<string, unknown[]> = {
  sid: ['fuzz-new.example.com'],
  transport: ['agent', 'ssh'],
  covens: [['web'], []],
  name: ['fuzz-svc'],
  git: [REPO.url],
  ref: ['main'],
  aid: ['fuzz-new-op'],
  role: ['viewer'],
  force: [true, false],
  limit: [1, 50],
  coven: ['web'],
  status: ['pending'],
};

const text = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 80 }),
  fc.string({ unit: 'binary-ascii', maxLength: 300 }),
  fc.constantFrom(
    '',
    '.',
    '..',
    'a.b',
    'A.EXAMPLE.COM',
    '-a.example.com',
    'x'.repeat(300),
    '\u0000',
    'a\u0000.example.com',
    "' or 1=1 --",
    '%00',
    '__proto__',
    'constructor',
  ),
);
const junk = fc.oneof(text, fc.jsonValue({ maxDepth: 3 }), fc.integer(), fc.constant(null), fc.boolean());

function fieldValue(name: string): fc.Arbitrary<unknown> {
  return VALID[name]
    ? fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...VALID[name]) }, { weight: 2, arbitrary: junk })
    : junk;
}

function nested(depth: number): string {
  return '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}

// A query value is text. JSON for non-strings: fast-check may build objects with a null prototype
// (e.g. a `__proto__` key), which String() cannot convert.
const asQueryText = (v: unknown): string => (typeof v === 'string' ? v : (JSON.stringify(v) ?? 'null'));

interface Case {
  params: Record<string, string>;
  query: [string, string][];
  body?: string;
  contentType?: string;
}

function caseArb(route: RouteDef): fc.Arbitrary<Case> {
  const paramNames = Object.keys(route.params?.properties ?? {});
  const queryNames = Object.keys(route.query?.properties ?? {});
  const bodyNames = Object.keys(route.body?.schema.properties ?? {});
  const params = fc.record(
    Object.fromEntries(
      paramNames.map((n) => [n, fc.oneof(fc.constantFrom(...((VALID[n] as string[]) ?? ['x'])), text)]),
    ),
  );
  const query = fc.array(
    fc.oneof(...queryNames.map((n) => fc.tuple(fc.constant(n), fieldValue(n).map(asQueryText))), fc.tuple(text, text)),
    { maxLength: 4 },
  );
  const bodyObject = fc
    .record(Object.fromEntries(bodyNames.map((n) => [n, fieldValue(n)])), { requiredKeys: [] })
    .chain((o) =>
      fc.oneof(
        fc.constant(o as Record<string, unknown>),
        fc.record({ extra: junk }).map((x) => ({ ...o, ...x })),
      ),
    );
  const body =
    route.method === 'get'
      ? fc.constant(undefined)
      : fc.oneof(
          { weight: 5, arbitrary: bodyObject.map((o) => JSON.stringify(o)) },
          { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)) },
          { weight: 1, arbitrary: text },
          { weight: 1, arbitrary: fc.integer({ min: 30, max: 40 }).map(nested) },
          { weight: 1, arbitrary: fc.constant(undefined) },
        );
  const contentType = fc.oneof(
    { weight: 6, arbitrary: fc.constant('application/json') },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        'text/plain',
        'application/json; charset=latin1',
        'application/problem+json',
        'multipart/form-data',
        undefined,
      ),
    },
  );
  return fc.record({ params, query, body, contentType }, { requiredKeys: ['params', 'query'] }) as fc.Arbitrary<Case>;
}

/** Would the route's own validators accept this request (body parsed as JSON)? */
function validators(route: RouteDef) {
  const v = {
    params: route.params ? compileValidator(route.params, 'path') : undefined,
    query: route.query ? compileValidator(route.query, 'query') : undefined,
    body: route.body ? compileValidator(route.body.schema, 'body') : undefined,
  };
  return (c: Case): boolean => {
    if (v.params && !v.params({ ...c.params })) return false;
    const q: Record<string, unknown> = Object.create(null);
    for (const [k, val] of c.query) q[k] = k in q ? [q[k], val].flat() : val;
    if (v.query ? !v.query(q) : Object.keys(q).length > 0) return false;
    if (c.body === undefined || c.body === '') return !route.body?.required;
    if (!v.body || !/^application\/(problem\+)?json$/.test(c.contentType ?? '')) return false;
    try {
      return v.body(JSON.parse(c.body));
    } catch {
      return false;
    }
  };
}

function urlOf(route: RouteDef, c: Case): string {
  const path = route.path.replace(/\{([A-Za-z_]+)\}/g, (_m, n: string) => encodeURIComponent(c.params[n]));
  const qs = new URLSearchParams(c.query).toString();
  return qs ? `${path}?${qs}` : path;
}

/** One request of a case, as the operator would send it. */
function send(tk: TestKeeper, route: RouteDef, c: Case): Promise<Answer> {
  const headers: Record<string, string> =
    c.contentType && c.body !== undefined ? { 'content-type': c.contentType } : {};
  return call(tk.baseUrl, route.method.toUpperCase(), urlOf(route, c), { token: tk.adminToken, raw: c.body, headers });
}

/** The records lookups can hit (and must still leave alone). */
async function seedRecords(tk: TestKeeper): Promise<void> {
  const seed = [
    call(tk.baseUrl, 'POST', '/v1/souls', {
      token: tk.adminToken,
      body: { sid: 'seed.example.com', transport: 'agent', covens: ['web'] },
    }),
    call(tk.baseUrl, 'POST', '/v1/services', {
      token: tk.adminToken,
      body: { name: 'seed', git: REPO.url, ref: 'main' },
    }),
  ];
  for (const a of await Promise.all(seed)) assert.equal(a.status, 201, a.text);
}

const describeCase = (route: RouteDef, c: Case) =>
  `${route.method.toUpperCase()} ${urlOf(route, c)} content-type ${c.contentType} body ${JSON.stringify(c.body)?.slice(0, 300)}`;

/**
 * A batch changed the registries: which request did? The batch is replayed one request at a time on
 * a fresh keeper with the same records, fingerprinting after each, and the first that changes them
 * is named. If none does alone, the change came from requests running together, and all are named.
 */
async function pinChange(route: RouteDef, batch: Case[]): Promise<string> {
  const fresh = await startTestKeeper();
  try {
    await seedRecords(fresh);
    const before = await registryFingerprint(fresh.keeper.runtime.db);
    for (const c of batch) {
      const a = await send(fresh, route, c);
      if ((await registryFingerprint(fresh.keeper.runtime.db)) !== before) {
        return `the registries changed: replayed alone, ${describeCase(route, c)} answered ${a.status} and changed them`;
      }
    }
    return `the registries changed, by no request of the batch alone (replayed one by one); the batch:\n${batch.map((c) => describeCase(route, c)).join('\n')}`;
  } finally {
    await fresh.stop();
  }
}

describe('Operator API: property-based fuzzing of every route', function () {
  this.timeout(600_000);
  let tk: TestKeeper;
  let baseline: string;

  before(async () => {
    tk = await startTestKeeper();
    await seedRecords(tk);
    baseline = await registryFingerprint(tk.keeper.runtime.db);
  });
  after(async () => {
    await tk?.stop();
  });

  for (const route of allRoutes) {
    it(`${route.method.toUpperCase()} ${route.path}: ${RUNS} generated requests, never 5xx, rejected ones change nothing`, async () => {
      const accepts = validators(route);
      // A valid create, or a forced reissue for an existing host, would rightly change the registries.
      const writes = (c: Case) =>
        accepts(c) &&
        route.method === 'post' &&
        (!route.params || Object.values(c.params).some((p) => ['seed.example.com', 'admin'].includes(p)));
      let sent = 0;
      let rejected = 0;
      // Once the registries changed, every later batch would fail too: shrinking would only blame
      // innocent requests, so the batches after it pass and the first failure is the one reported.
      let changed = false;
      const check = (c: Case, a: Answer) => {
        const what = describeCase(route, c);
        assert.ok(a.status < 500, `${what}: ${a.status} ${a.text}`);
        if (!accepts(c)) {
          assert.ok(a.status >= 400, `${what}: invalid input accepted: ${a.status} ${a.text.slice(0, 200)}`);
        }
        if (a.status >= 400) {
          rejected++;
          assert.match(a.headers.get('content-type') ?? '', /^application\/problem\+json/, what);
          assert.equal(a.body.status, a.status, what);
        }
      };
      await fc.assert(
        fc.asyncProperty(
          fc.array(
            caseArb(route).filter((c) => !writes(c)),
            { minLength: BATCH, maxLength: BATCH },
          ),
          async (batch) => {
            if (changed) return;
            const answers = await Promise.all(batch.map((c) => send(tk, route, c)));
            sent += batch.length;
            if ((await registryFingerprint(tk.keeper.runtime.db)) !== baseline) {
              changed = true;
              assert.fail(await pinChange(route, batch));
            }
            batch.forEach((c, i) => check(c, answers[i]));
          },
        ),
        { numRuns: Math.ceil(RUNS / BATCH) },
      );
      assert.ok(sent >= RUNS, `${sent} requests sent, fewer than ${RUNS}`);
      assert.ok(rejected >= RUNS / 10, `the generator mostly made valid requests (${rejected} of ${sent} rejected)`);
    });
  }
});
