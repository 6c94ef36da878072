// Redaction by type (issue 12): every serializer that could meet a secret prints
// `«secret:<path>#<field>»`, and a new serializer in the keeper's code fails this test until it is
// listed here with how it handles the type. Runs without the stack.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { inspect, format } from 'node:util';
import { SecretText, SecretValue, revealJson } from '../../common/secret';
import { createLogger } from '../../common/logger';
import { ApiProblem, sendProblem } from '../../api/problems';
import { problemResult } from '../../mcp/invoke';
import { repoRoot } from '../support/repo';

const CANARY = 'canary-serializer-5f1c9e';
const ref = { path: 'secret/keeper/services/demo/db', field: 'password' };
const PH = '«secret:secret/keeper/services/demo/db#password»';
const value = () => new SecretValue(ref, CANARY);
const text = () => new SecretText(['user=app password=', value(), '\n']);

function printsPlaceholder(out: string): void {
  assert.ok(!out.includes(CANARY), `the value leaked: ${out}`);
  assert.ok(out.includes(PH), `no placeholder in: ${out}`);
}

// Each check feeds a secret through one serializer and returns what it printed.
const exercise: Record<string, () => string> = {
  'JSON.stringify (express res.json, database jsonb columns, MCP structured content)': () =>
    JSON.stringify({ a: value(), b: [text()] }),
  'String() and template literals': () => `${value()} ${String(text())}`,
  'util.inspect / console.log': () =>
    inspect({ a: value(), b: text() }, { depth: 5 }) + format('%s %o %j', value(), text(), value()),
  'logger (common/logger.ts)': () => {
    const lines: string[] = [];
    createLogger({ write: (l) => lines.push(l) }).warn(`step ${value()}`, {
      content: text(),
      v: value(),
      err: new Error(`bad ${value()}`),
    });
    return lines.join('\n');
  },
  'problem bodies (api/problems.ts)': () => {
    let sent = '';
    const res = {
      headersSent: false,
      setHeader() {},
      status() {
        return this;
      },
      type() {
        return this;
      },
      send(b: string) {
        sent = b;
        return this;
      },
    };
    sendProblem(
      res as never,
      new ApiProblem(400, 'invalid-request', `bad input ${value()}`, {
        errors: [{ path: '/body/x', message: `${text()}` }],
      }),
    );
    return sent;
  },
  'MCP results (mcp/invoke.ts)': () =>
    JSON.stringify(problemResult(new ApiProblem(400, 'invalid-request', `bad ${value()}`))),
  'Error messages and stacks': () => {
    const e = new Error(`failed with ${text()}`);
    return `${e.message}\n${e.stack}`;
  },
};

// Files whose code serializes (the patterns below), and why a secret there prints as its placeholder.
// A new file with a serializer must be added here, with its reason, after checking it.
const HANDLED: Record<string, string> = {
  'common/logger.ts': 'JSON.stringify of fields: toJSON prints the placeholder (exercised above)',
  'common/secret.ts': 'defines the type; revealJson is the one revealing serializer (checked below)',
  'api/problems.ts': 'problem bodies: JSON.stringify (exercised above)',
  'api/mount.ts': 'express res.json of route answers: JSON.stringify',
  'api/docs.ts': 'the OpenAPI document: no run data',
  'api/routes/run-events.ts': 'SSE frames of run events: JSON.stringify',
  'api/stream-auth.ts':
    'the closing SSE frame of a refused caller: status, type and detail strings of a problem, no run data',
  'runs/activities/host-boundary.ts':
    'stringifies a host diff only to scrub secret values out of its text; a SecretValue in it prints its placeholder',
  'db/repos/step-secrets.ts':
    'secret references (store path and field) sent to hosts as jsonb for one insert; never a value',
  'api/routes/executions.ts':
    "SSE frames of an execution's host answers: JSON.stringify (params are request JSON, never a SecretValue)",
  'api/routes/souls.ts': 'count_by keys of stored facts: JSON.stringify of soulprint values (no secret is a fact)',
  'hub/facts-refresh.ts': 'the facts refresh request on Redis: JSON.stringify of an id, SIDs and a timeout (no secret)',
  'db/repos/executions.ts':
    'jsonb columns of an execution (params, target, summary): JSON.stringify; params hold secretstore: references only (resolved at dispatch, runs/execution-secrets.ts)',
  'ui/app/src/input-fields.tsx':
    "the browser's input editor: JSON.stringify of values the operator typed (a secret input is a password field, sent as typed)",
  'ui/app/src/input-editor.tsx':
    "the browser's raw JSON editor: JSON.stringify of the input the operator typed or the API gave (secrets as references at most)",
  'ui/app/src/views/execution.tsx':
    "browser side: shows an execution's params and target from the API (secretstore: references, never values)",
  'runs/start/budget.ts': "a refusal quoting the operator's max_failed: JSON.stringify of a number or string",
  'mcp/invoke.ts': 'tool results: JSON.stringify and template literals (exercised above)',
  'mcp/server.ts': 'the MCP transport: JSON of tool results',
  'ui/server/index.ts': 'serves the /ui bundle; the UI reads the REST API (JSON)',
  'ui/app/src/api.ts': 'browser side: receives JSON that holds placeholders at most',
  'ui/app/src/diff.ts': 'browser side: formats JSON it received',
  'ui/app/src/views/history.tsx': 'browser side: shows state from the API (references at most)',
  'ui/app/src/views/incarnation.tsx': 'browser side: shows state and input from the API (references at most)',
  'ui/app/src/views/plan.tsx':
    'browser side: shows the plan from the API (render errors and diffs: placeholders and hashes at most)',
  'ui/app/src/views/run-report.tsx': 'browser side: shows the run report from the API (placeholders at most)',
  'ui/app/src/views/signin.tsx': "browser side: the operator's own token form",
  'ui/app/src/views/souls.tsx': 'browser side: soul records, no run data',
  'db/repos/run-waiting.ts':
    "a run's wait (jsonb): JSON.stringify of what it waits for, the batch and the gate's CEL text from the scenario (no run data)",
  'db/repos/incarnations.ts': 'jsonb columns: JSON.stringify; state holds references, never values',
  'db/repos/runs.ts': 'jsonb columns: JSON.stringify; plans hold secret handles, never values',
  'platform/config/load.ts': 'config errors: no run data',
  'keeper/kid-claim.ts': 'a cache value of the kid claim: no run data',
  'runs/activities/inflight.ts':
    'a cache value per in-flight dispatch: apply id, host count, workflow and run ids, a time; no run data',
  'platform/listen.ts': 'listener errors: no run data',
  'keeper/readiness.ts':
    "readiness JSON: no run data; the sources' reasons are git's summarized errors, which never carry a credential",
  'keeper/server.ts': 'metrics text and problem answers: no run data',
  'hub/session.ts': "the step encoding for the soul's own stream: the one caller of revealJson",
  'hub/ssh/apply-session.ts':
    "the step encoding for `soul apply` on an SSH host, over that host's own connection: the second caller of revealJson",
  'runs/activities/expression-values.ts':
    'the values a failed_when read, for the step output: JSON.stringify; the context holds references, never values, and a SecretValue prints its placeholder',
  'db/repos/souls.ts': "jsonb of soulprints and the ssh block: the key's reference, never key material",
  'db/repos/plans.ts':
    'jsonb of plans (docs/plans.md): input and state hold references, steps hold secret handles, never values',
  'runs/activities/secrets.ts':
    "a soul's diff, scrubbed of the host's secret values before it is kept: JSON.stringify of what the soul sent (plain text, no SecretValue)",
  'runs/activities/plan-drift.ts':
    'the drift lines of a refused host: JSON.stringify of stored diffs (hashes and diffs of steps without secrets)',
};
const SOUL_SIDE = /^agent\//; // the soul receives values as plain text over its stream, never the type
const SINK = /JSON\.stringify\(|\.json\(|\binspect\(|\.send\(|revealJson\(/;
const DIRS = ['api', 'mcp', 'ui', 'common', 'hub', 'keeper', 'runs', 'platform', 'db', 'secrets', 'scenario', 'lint'];

function sources(dir: string): string[] {
  const abs = path.join(repoRoot(), dir);
  if (!fs.existsSync(abs)) return [];
  return fs
    .readdirSync(abs, { recursive: true, withFileTypes: true })
    .filter(
      (e) =>
        e.isFile() &&
        /\.tsx?$/.test(e.name) &&
        !/\.test\.tsx?$|\.d\.ts$/.test(e.name) &&
        !e.parentPath.includes('node_modules'),
    )
    .map((e) => path.relative(repoRoot(), path.join(e.parentPath, e.name)).split(path.sep).join('/'));
}

describe('secrets are redacted by type in every serializer', function () {
  for (const [name, run] of Object.entries(exercise)) {
    it(`${name} prints the placeholder, never the value`, function () {
      printsPlaceholder(run());
    });
  }

  it('the value itself is unreachable by enumeration', function () {
    assert.deepEqual(Object.keys(value()), ['ref']);
    assert.ok(!JSON.stringify(Object.entries(text())).includes(CANARY));
  });

  it('only the step encodings of the two transports (agent stream, SSH) reveal values', function () {
    assert.equal(revealJson({ content: text() }), JSON.stringify({ content: `user=app password=${CANARY}\n` }));
    const callers = DIRS.flatMap(sources).filter(
      (f) => f !== 'common/secret.ts' && fs.readFileSync(path.join(repoRoot(), f), 'utf8').includes('revealJson('),
    );
    assert.deepEqual(callers, ['hub/session.ts', 'hub/ssh/apply-session.ts']);
  });

  it('every file of the keeper that serializes is listed with how it handles the type', function () {
    const files = DIRS.flatMap(sources).filter(
      (f) => !SOUL_SIDE.test(f) && !f.startsWith('scenario/') && !f.startsWith('lint/'),
    );
    const unlisted = files.filter(
      (f) => SINK.test(fs.readFileSync(path.join(repoRoot(), f), 'utf8')) && !(f in HANDLED),
    );
    assert.deepEqual(
      unlisted,
      [],
      'a new serializer: check that it prints SecretValue/SecretText as their placeholder, then list it in HANDLED',
    );
  });
});
