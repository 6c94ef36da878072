// The soul's configuration file (interface spec 4.5, agent config): YAML checked against its schema
// (common/schema-check.ts: no schema compiler at the soul's start-up). Paths
// are resolved against the file's folder. `keeper.tls.ca` is checked apart from the schema so that
// its absence gets the spec's own message ("keeper.tls.ca is empty") rather than a schema line.
import fs from 'node:fs';
import path from 'node:path';
import yaml from 'js-yaml';
import { checkSchema, type Schema } from '../common/schema-check';
import { SoulError, caEmpty } from './errors';

export interface Endpoint {
  host: string;
  bootstrap_port: number;
  event_stream_port: number;
  priority: number;
}

export interface SoulConfig {
  file: string;
  sid: string;
  paths: { modules: string; seed: string };
  keeper: { endpoints: Endpoint[]; tls: { ca?: string } };
  /** Days a finished apply's ledger journal is kept (see agent/steps.ts for why this long). */
  ledger: { retention_days: number };
  /** The metrics listener on 127.0.0.1 (agent/metrics.ts); absent: off. */
  metrics?: { port: number };
}

/** Default ledger retention: far beyond the keeper's longest redelivery window (agent/steps.ts). */
export const DEFAULT_LEDGER_RETENTION_DAYS = 30;

const port: Schema = { type: 'integer', minimum: 1, maximum: 65535 };
/** The configuration's JSON schema (exported for common/schema-check.test.ts, which checks it with ajv too). */
export const SOUL_CONFIG_SCHEMA: Schema = {
  type: 'object',
  additionalProperties: false,
  required: ['sid', 'paths', 'keeper'],
  properties: {
    sid: { type: 'string', minLength: 1, maxLength: 253 },
    paths: {
      type: 'object',
      additionalProperties: false,
      required: ['modules', 'seed'],
      properties: { modules: { type: 'string', minLength: 1 }, seed: { type: 'string', minLength: 1 } },
    },
    keeper: {
      type: 'object',
      additionalProperties: false,
      required: ['endpoints'],
      properties: {
        endpoints: {
          type: 'array',
          minItems: 1,
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['host', 'bootstrap_port', 'event_stream_port', 'priority'],
            properties: {
              host: { type: 'string', minLength: 1 },
              bootstrap_port: port,
              event_stream_port: port,
              priority: { type: 'integer' },
            },
          },
        },
        tls: { type: 'object', additionalProperties: false, properties: { ca: { type: ['string', 'null'] } } },
      },
    },
    ledger: {
      type: 'object',
      additionalProperties: false,
      properties: { retention_days: { type: 'integer', minimum: 1, maximum: 3650 } },
    },
    metrics: {
      type: 'object',
      additionalProperties: false,
      required: ['port'],
      properties: { port },
    },
  },
};

export function loadSoulConfig(file: string): SoulConfig {
  let doc: unknown;
  try {
    doc = yaml.load(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new SoulError(
      `cannot read the configuration ${file}: ${(err as Error).message.split('\n')[0]}`,
      'pass --config=<path> to a readable YAML file',
      2,
    );
  }
  const broken = checkSchema(SOUL_CONFIG_SCHEMA, doc);
  if (broken.length > 0) {
    const problems = broken.map(
      (e) =>
        `${e.instancePath.replace(/^\//, '').replace(/\//g, '.') || '(top level)'} ${e.message}` +
        (e.keyword === 'additionalProperties' ? ` (${String(e.params.additionalProperty)})` : ''),
    );
    throw new SoulError(
      `invalid configuration ${file}: ${problems.join('; ')}`,
      'correct those keys (see docs/agents.md)',
      2,
    );
  }
  const c = doc as Omit<SoulConfig, 'file'>;
  const dir = path.dirname(path.resolve(file));
  const abs = (p: string) => path.resolve(dir, p);
  const ca = c.keeper.tls?.ca;
  return {
    file,
    sid: c.sid.toLowerCase(),
    paths: { modules: abs(c.paths.modules), seed: abs(c.paths.seed) },
    keeper: { endpoints: [...c.keeper.endpoints], tls: { ca: ca ? abs(ca) : undefined } },
    ledger: { retention_days: c.ledger?.retention_days ?? DEFAULT_LEDGER_RETENTION_DAYS },
    ...(c.metrics ? { metrics: { port: c.metrics.port } } : {}),
  };
}

/** Endpoints in the order they are tried: lowest `priority` first, file order among equals. */
export function byPriority(endpoints: Endpoint[]): Endpoint[] {
  return endpoints
    .map((e, i) => ({ e, i }))
    .sort((a, b) => a.e.priority - b.e.priority || a.i - b.i)
    .map(({ e }) => e);
}

/** The pre-loaded CA (PEM), or the spec's "keeper.tls.ca is empty" error. No trust on first use. */
export function readCa(config: SoulConfig): Buffer {
  const ca = config.keeper.tls.ca;
  if (!ca) return fail(caEmpty(`no CA file is configured in ${config.file}`));
  let pem: Buffer;
  try {
    pem = fs.readFileSync(ca);
  } catch (err) {
    return fail(caEmpty(`the CA file ${ca} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`));
  }
  if (!pem.toString('utf8').includes('-----BEGIN CERTIFICATE-----'))
    return fail(caEmpty(`the CA file ${ca} holds no PEM certificate`));
  return pem;
}

function fail(err: SoulError): never {
  throw err;
}
