// One-off executions (issue 34, docs/executions.md): start one on a selection of hosts, read it, and
// follow its answers as Server-Sent Events in the runs' format (api/routes/run-events.ts): a `host`
// event per answer numbered by `id` (resume with Last-Event-ID), then `end` with the summary.
import type { Request, Response } from 'express';
import {
  executionHostsAfter,
  getExecution,
  type ExecutionHostEvent,
  type ExecutionRecord,
} from '../../db/repos/executions';
import { ExecutionRefused, QueryError, startExecution, type ExecutionRequest } from '../../runs/index';
import type { ApiDeps } from '../deps';
import { ApiProblem, problems } from '../problems';
import { executionModulesOf } from '../roles';
import { defineRoute } from '../route';
import { executionBody, executionParams, executionSchema, startedExecutionSchema } from '../schemas/executions';
import { operatorSlots } from './run-watch-limits';

// jsonb keeps its own key order: the summary is always shown ok, changed, failed, unknown.
const summaryView = (s: ExecutionRecord['summary']) =>
  s === null ? null : { ok: s.ok, changed: s.changed, failed: s.failed, unknown: s.unknown };

const hostView = (h: ExecutionHostEvent) => ({
  sid: h.sid,
  status: h.status,
  changed: h.changed,
  output: h.output,
  diff: h.diff,
  started_at: h.started_at?.toISOString() ?? null,
  finished_at: h.finished_at?.toISOString() ?? null,
});

async function executionView(deps: ApiDeps, e: ExecutionRecord) {
  const hosts: ExecutionHostEvent[] = [];
  for (let after = 0; ; ) {
    const page = await executionHostsAfter(deps.runtime.db, e.id, after, 1000);
    hosts.push(...page);
    if (page.length < 1000) break;
    after = page[page.length - 1]!.seq;
  }
  return {
    id: e.id,
    aid: e.aid,
    module: e.module,
    params: e.params,
    target: e.target,
    dry_run: e.dry_run,
    timeout: e.timeout_ms / 1000,
    status: e.status,
    selected: e.sids.length,
    summary: summaryView(e.summary),
    created_at: e.created_at.toISOString(),
    finished_at: e.finished_at?.toISOString() ?? null,
    hosts: hosts.map(hostView),
  };
}

function send(res: Response, event: string, data: unknown, id?: number): void {
  res.write(`${id !== undefined ? `id: ${id}\n` : ''}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

async function stream(
  deps: ApiDeps,
  id: string,
  after: number,
  req: Request,
  res: Response,
  release: () => void,
): Promise<void> {
  let closed = false;
  req.on('close', () => {
    closed = true;
  });
  res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('X-Accel-Buffering', 'no');
  res.flushHeaders();
  res.write('retry: 1000\n\n');
  const started = Date.now();
  let lastSeq = after;
  try {
    while (!closed) {
      // Head first: once it says done, every answer is committed (finish writes the last ones first).
      const head = await getExecution(deps.runtime.db, id);
      if (!head) break;
      for (;;) {
        const events = await executionHostsAfter(deps.runtime.db, id, lastSeq);
        for (const e of events) {
          send(res, 'host', hostView(e), e.seq);
          lastSeq = e.seq;
        }
        if (events.length < 500) break;
      }
      if (head.status === 'done') {
        send(res, 'end', {
          status: head.status,
          summary: summaryView(head.summary),
          finished_at: head.finished_at?.toISOString() ?? null,
        });
        break;
      }
      if (Date.now() - started > 10 * 60_000) break;
      await new Promise((r) => setTimeout(r, 150));
    }
  } finally {
    release();
    res.end();
  }
}

export const executionRoutes = [
  defineRoute<Record<string, never>, Record<string, never>, ExecutionRequest>({
    method: 'post',
    path: '/v1/executions',
    operationId: 'startExecution',
    tag: 'Executions',
    permission: 'executions:run',
    summary: 'Run one module on selected hosts',
    description:
      'Runs one module of the core library once on the hosts `target` selects (covens, sids, a `where` over the stored facts), ' +
      'outside any incarnation: no state is committed and no lock taken. A durable workflow; a host that does not answer within `timeout` ' +
      `seconds is \`unknown\`. \`dry_run\` sends it in check mode (nothing changes). Refused with 403 when the caller's role may not run the module, ` +
      "may not run programs (`core.cmd.run`) and a parameter names one (`validate`, `unless`, `onlyif`), or a `secretstore:` reference lies outside the role's `executions.secret_prefixes`, " +
      '428 above `executions.confirm_above` hosts (keeper config, 10 by default) without `confirm: true`, ' +
      '429 with `executions.per_operator` (4) executions of the caller running.',
    body: { schema: executionBody, required: true },
    responses: { 202: { description: 'started; follow it at `events`', schema: startedExecutionSchema } },
    async handler({ body, caller, deps }) {
      const temporal = deps.runs.temporal;
      if (!temporal?.client) throw problems.temporal();
      try {
        const limits = deps.runtime.config.executions;
        const { id, sids } = await startExecution(deps.runtime.db, temporal, caller.aid, body, {
          modules: executionModulesOf(caller.role, limits.modules),
          confirmAbove: limits.confirm_above,
          perOperator: limits.per_operator,
          scenarioPrefix: deps.runtime.config.secretstore.scenario_prefix,
          role: caller.role,
          secretPrefixes: Object.prototype.hasOwnProperty.call(limits.secret_prefixes, caller.role)
            ? limits.secret_prefixes[caller.role]!
            : [],
        });
        return {
          status: 202,
          body: {
            id,
            selected: sids.length,
            sids,
            execution: `/v1/executions/${id}`,
            events: `/v1/executions/${id}/events`,
          },
          headers: { Location: `/v1/executions/${id}` },
        };
      } catch (e) {
        if (e instanceof QueryError)
          throw problems.invalid(`target.where: ${e.message}`, [{ path: '/body/target/where', message: e.message }]);
        if (!(e instanceof ExecutionRefused)) throw e;
        const r = e.refusal;
        if (r.kind === 'invalid')
          throw problems.invalid(`${r.path.replace('/body/', '').replaceAll('/', '.')}: ${r.message}`, [
            { path: r.path, message: r.message },
          ]);
        if (r.kind === 'forbidden-module') throw new ApiProblem(403, 'forbidden', r.message);
        if (r.kind === 'forbidden-param')
          throw new ApiProblem(403, 'forbidden', r.message, { errors: [{ path: r.path, message: r.message }] });
        if (r.kind === 'confirm')
          throw new ApiProblem(428, 'confirmation-required', r.message, {
            errors: [{ path: '/body/confirm', message: `must be true to run on ${r.selected} hosts` }],
          });
        throw new ApiProblem(429, 'too-many-executions', r.message, { headers: { 'Retry-After': '5' } });
      }
    },
  }),
  defineRoute<{ id: string }>({
    method: 'get',
    path: '/v1/executions/{id}',
    operationId: 'getExecution',
    tag: 'Executions',
    permission: 'executions:read',
    summary: 'Get an execution',
    params: executionParams,
    responses: { 200: { description: 'the execution with every answer so far', schema: executionSchema } },
    async handler({ params, deps }) {
      const e = await getExecution(deps.runtime.db, params.id);
      if (!e) throw problems.notFound(`execution ${params.id} does not exist`);
      return { status: 200, body: await executionView(deps, e) };
    },
  }),
  defineRoute<{ id: string }>({
    method: 'get',
    path: '/v1/executions/{id}/events',
    operationId: 'streamExecutionEvents',
    tag: 'Executions',
    permission: 'executions:read',
    summary: 'Follow an execution (Server-Sent Events)',
    description:
      'Streams `host` (one host answered: status ok, changed, failed or unknown, its output and diff; its `id` is the event number) ' +
      'and `end` (the summary), after which the stream closes. Reconnect with `Last-Event-ID` to continue without losing an answer.',
    params: executionParams,
    responses: {
      200: { description: 'the event stream', contentType: 'text/event-stream', schema: { type: 'string' } },
    },
    async handler({ params, caller, deps }) {
      const e = await getExecution(deps.runtime.db, params.id);
      if (!e) throw problems.notFound(`execution ${params.id} does not exist`);
      const release = operatorSlots(deps).acquire(caller.aid);
      return {
        status: 200,
        body: undefined,
        stream: async (res, req) => {
          const raw = req.headers['last-event-id'];
          const last = Array.isArray(raw) ? raw[0] : raw;
          if (last !== undefined && last !== '' && !/^[0-9]{1,18}$/.test(last)) {
            release();
            throw problems.invalid('the Last-Event-ID header is not an event id of this stream', [
              { path: '/headers/last-event-id', message: 'must be the decimal id of a host event' },
            ]);
          }
          await stream(deps, e.id, last ? Number(last) : 0, req, res, release);
        },
      };
    },
  }),
];
