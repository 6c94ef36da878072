import assert from 'node:assert/strict';
import Ajv from 'ajv';
import { checkSchema } from '../common/schema-check';
import { SOUL_CONFIG_SCHEMA } from './config';

// The soul checks its configuration without ajv (start-up time); the keeper's schema compiler stays
// the judge: for every configuration below, both find the same problems, worded the same.
const ajv = new Ajv({ allErrors: true, allowUnionTypes: true }).compile(SOUL_CONFIG_SCHEMA);

function ajvProblems(doc: unknown): string[] {
  if (ajv(doc)) return [];
  return (ajv.errors ?? [])
    .map(
      (e) =>
        `${e.instancePath.replace(/^\//, '').replace(/\//g, '.')} ${e.message}` +
        (e.keyword === 'additionalProperties'
          ? ` (${(e.params as { additionalProperty: string }).additionalProperty})`
          : ''),
    )
    .sort();
}

function ours(doc: unknown): string[] {
  return checkSchema(SOUL_CONFIG_SCHEMA, doc)
    .map(
      (e) =>
        `${e.instancePath.replace(/^\//, '').replace(/\//g, '.')} ${e.message}` +
        (e.keyword === 'additionalProperties' ? ` (${String(e.params.additionalProperty)})` : ''),
    )
    .sort();
}

const good = () => ({
  sid: 'web-1.example.org',
  paths: { modules: '/usr/lib/soul/modules', seed: '/var/lib/soul/seed' },
  keeper: {
    endpoints: [{ host: 'keeper.example.org', bootstrap_port: 7443, event_stream_port: 7444, priority: 1 }],
    tls: { ca: '/etc/soul/ca.pem' },
  },
  ledger: { retention_days: 30 },
  metrics: { port: 9101 },
});

type Doc = ReturnType<typeof good> & Record<string, any>;
const broken: Array<[string, (d: Doc) => unknown]> = [
  ['the good one', (d) => d],
  ['not an object', () => ['sid']],
  ['null', () => null],
  [
    'no sid, no paths',
    (d) => {
      delete (d as any).sid;
      delete (d as any).paths;
      return d;
    },
  ],
  ['an unknown key at the top', (d) => ({ ...d, sed: 'x' })],
  ['an empty sid', (d) => ({ ...d, sid: '' })],
  ['a sid of 254 characters', (d) => ({ ...d, sid: 'a'.repeat(254) })],
  ['a sid of 253 characters (the limit)', (d) => ({ ...d, sid: 'a'.repeat(253) })],
  ['a sid of 253 code points beyond the BMP', (d) => ({ ...d, sid: '\u{1F600}'.repeat(253) })],
  ['a numeric sid', (d) => ({ ...d, sid: 12 })],
  ['paths missing seed, with a typo', (d) => ({ ...d, paths: { modules: '/m', sed: '/s' } })],
  ['no endpoints', (d) => ({ ...d, keeper: { endpoints: [] } })],
  ['endpoints not a list', (d) => ({ ...d, keeper: { endpoints: { host: 'k' } } })],
  [
    'an endpoint with port 0, a fractional priority and an extra key',
    (d) => ({
      ...d,
      keeper: {
        endpoints: [
          d.keeper.endpoints[0],
          { host: 'k2', bootstrap_port: 0, event_stream_port: 70000, priority: 1.5, weight: 2 },
        ],
      },
    }),
  ],
  [
    'an endpoint with a port as text and no host',
    (d) => ({ ...d, keeper: { endpoints: [{ bootstrap_port: '7443', event_stream_port: 7444, priority: 0 }] } }),
  ],
  ['tls.ca null', (d) => ({ ...d, keeper: { ...d.keeper, tls: { ca: null } } })],
  ['tls.ca a number, tls with an extra key', (d) => ({ ...d, keeper: { ...d.keeper, tls: { ca: 5, cert: 'x' } } })],
  ['retention 0', (d) => ({ ...d, ledger: { retention_days: 0 } })],
  ['retention too long', (d) => ({ ...d, ledger: { retention_days: 3651 } })],
  ['retention as text', (d) => ({ ...d, ledger: { retention_days: '30' } })],
  ['metrics without a port', (d) => ({ ...d, metrics: {} })],
  ['metrics port 65536', (d) => ({ ...d, metrics: { port: 65536 } })],
  ['metrics as a boolean', (d) => ({ ...d, metrics: true })],
  ['an infinite port', (d) => ({ ...d, metrics: { port: Infinity } })],
];

describe("the soul's configuration check, against ajv", () => {
  for (const [what, make] of broken) {
    it(`finds what ajv finds: ${what}`, () => {
      const doc = make(good());
      assert.deepEqual(ours(doc), ajvProblems(doc));
    });
  }

  it('accepts the good configuration and finds every problem of a bad one, not only the first', () => {
    assert.deepEqual(ours(good()), []);
    const problems = ours({ ...good(), sid: '', sed: 1, metrics: { port: 0 } });
    assert.deepEqual(problems, [
      ' must NOT have additional properties (sed)',
      'metrics.port must be >= 1',
      'sid must NOT have fewer than 1 characters',
    ]);
  });
});
