// The run service's own logic with fakes for the world around it (the saga against the real stack
// is test/runs/*, test/api/*, test/mcp/*): what a refusal looks like to a starter, that nothing is
// touched when Temporal is down, and that one run start loads the service from git once.
import assert from 'node:assert/strict';
import type { Knex } from 'knex';
import { RepoConflict } from '../../db/repos/errors';
import type { ServiceRecord } from '../../db/repos/services';
import type { LoadedService, ScenarioPort } from '../activities/scenario-port';
import { precheck } from './checks';
import type { RunServiceDeps } from './context';
import { sealInputs } from './launch';
import { outcomeOf, refuse } from './outcome';
import { createRunService } from './service';

/** A database no test here may reach: the refusals below happen before anything is read or written. */
const untouchableDb = new Proxy(() => undefined, {
  get() {
    throw new Error('the database was touched');
  },
  apply() {
    throw new Error('the database was touched');
  },
}) as unknown as Knex;

const service: ServiceRecord = {
  name: 'web',
  git: 'https://git.example/web.git',
  ref: 'main',
  credential_ref: null,
} as unknown as ServiceRecord;

function countingScenario() {
  const calls = { load: 0 };
  const loaded = {
    commit: 'c'.repeat(40),
    name: 'web',
    stateSchemaVersion: 1,
    secretInputs: { create: ['password'] },
  } as unknown as LoadedService;
  const scenario: Pick<ScenarioPort, 'loadService' | 'checkRun'> = {
    async loadService() {
      calls.load += 1;
      return loaded;
    },
    checkRun: () => [],
  };
  return { scenario, calls };
}

function depsWith(over: Partial<RunServiceDeps>): RunServiceDeps {
  const written: Record<string, Record<string, string>> = {};
  return {
    db: untouchableDb,
    secrets: {
      async writeFields(path: string, fields: Record<string, string>) {
        written[path] = fields;
      },
    },
    config: {
      services: { cache_dir: '/tmp/x' },
      secretstore: { scenario_prefix: 'scenario/' },
      plans: { ttl_ms: 1000 },
      temporal: { ui_url: '', namespace: 'default' },
    } as unknown as RunServiceDeps['config'],
    ...over,
  };
}

describe('run service outcomes', () => {
  it('names the kind, the field and the reason of a refusal', async () => {
    const out = await outcomeOf(async () => {
      throw refuse.invalid('input "port" must be an integer', [
        { path: '/body/input/port', message: 'not an integer' },
      ]);
    });
    assert.deepEqual(out, {
      accepted: false,
      kind: 'invalid',
      field: '/body/input/port',
      reason: 'input "port" must be an integer',
      fields: [{ path: '/body/input/port', message: 'not an integer' }],
    });
  });

  it('answers a taken lock as a conflict naming no field, and lets an unexpected error through', async () => {
    const out = await outcomeOf(async () => {
      throw new RepoConflict('duplicate', 'incarnation web is applying run x; wait for it to finish');
    });
    assert.deepEqual(out, {
      accepted: false,
      kind: 'conflict',
      field: null,
      reason: 'incarnation web is applying run x; wait for it to finish',
      fields: [],
    });
    await assert.rejects(
      outcomeOf(async () => {
        throw new TypeError('boom');
      }),
      /boom/,
    );
  });

  it('refuses every start while Temporal is not connected, before the database is touched', async () => {
    const runs = createRunService(depsWith({ scenario: countingScenario().scenario }));
    const by = 'AID';
    for (const out of [
      await runs.create({ name: 'web', service: 'web', covens: ['web'], by }),
      await runs.run({ name: 'web', operation: 'deploy', by }),
      await runs.upgrade({ name: 'web', version: 'v2', by }),
      await runs.retry({ name: 'web', by }),
      await runs.delete({ name: 'web', by }),
    ]) {
      const { reason, ...rest } = out as typeof out & { reason: string };
      assert.deepEqual(rest, { accepted: false, kind: 'unavailable', field: null, fields: [] });
      assert.match(reason, /^the workflow engine \(Temporal\) is not answering, so nothing was started/);
      assert.match(reason, /retry once \/readyz shows "temporal": "up"/, 'the refusal says when to retry');
    }
  });
});

describe('one load per run start', () => {
  it('checks and seals secret inputs with a single load of the service from git', async () => {
    const { scenario, calls } = countingScenario();
    const deps = depsWith({ scenario });
    const loaded = await precheck(deps, service, {
      operation: 'create',
      input: { password: 'hunter2' },
      covens: ['web'],
      allowEmpty: true,
      covensPath: '/body/covens',
      version: { name: 'v1', commit: 'c'.repeat(40) },
    });
    const input = await sealInputs(
      deps,
      { ...service, ref: 'c'.repeat(40) },
      { name: 'web', secrets_key: 'web.create.1' },
      'create',
      'web.create.1',
      { password: 'hunter2' },
      loaded,
    );
    assert.equal(calls.load, 1);
    // The value went to the store; what is kept is its reference.
    assert.match(String(input.password), /^secretstore:.*runs\/web\.create\.1#password$/);
  });

  it('does not load again when the caller has the version loaded already (delete finds destroy with it)', async () => {
    const { scenario, calls } = countingScenario();
    const already = await scenario.loadService({ git: service.git, ref: 'main', cacheDir: '/tmp/x' });
    await precheck(
      depsWith({ scenario }),
      service,
      { operation: 'destroy', input: {}, covens: ['web'], allowEmpty: true, covensPath: '/query/force' },
      already,
    );
    assert.equal(calls.load, 1);
  });
});
