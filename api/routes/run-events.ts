// Following a run without polling: GET /v1/incarnations/{name}/runs/{apply_id}/events streams the
// run as Server-Sent Events, resumable with Last-Event-ID. Any keeper can serve it: the events are
// read from PostgreSQL, where every host outcome is numbered in commit order
// (db/migrations/20261124001001_run_host_events.ts), so a reconnect to another keeper loses nothing.
import type { Request, Response } from 'express';
import { type HostEvent, hostEventsAfter, runHead, type RunHead } from '../../db/repos/run-events';
import type { ApiDeps } from '../deps';
import { problems } from '../problems';
import { defineRoute } from '../route';
import { runParams } from '../schemas/runs';
import { RunEventOrder } from './run-event-order';
import { operatorSlots } from './run-watch-limits';

/** How often the stream looks for news; a host event reaches the client within about this. */
const POLL_MS = 150;
/** A comment line this often keeps proxies and load balancers from closing an idle stream. */
const HEARTBEAT_MS = 15_000;
/** A stream ends after this long; the client reconnects with Last-Event-ID and loses nothing. */
const MAX_STREAM_MS = 10 * 60_000;
const LAST_EVENT_ID = /^[0-9]{1,18}$/;

function send(res: Response, event: string, data: unknown, id?: number): void {
  res.write(`${id !== undefined ? `id: ${id}\n` : ''}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

async function stream(
  deps: ApiDeps,
  head0: RunHead,
  after: number,
  req: Request,
  res: Response,
  release: () => void,
): Promise<void> {
  const db = deps.runtime.db;
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
  let lastBeat = started;
  let lastSeq = after;
  const order = new RunEventOrder();
  try {
    while (!closed) {
      // Head first, then events: once the head says the run ended, every host outcome is committed
      // (the commit activity runs after dispatch recorded them all), so the events read next are all.
      const head = await runHead(db, head0.apply_id);
      if (!head) break;
      const events: HostEvent[] = [];
      for (;;) {
        const page = await hostEventsAfter(db, head0.apply_id, lastSeq);
        events.push(...page);
        if (page.length > 0) lastSeq = page[page.length - 1]!.seq;
        if (page.length < 500) break;
      }
      for (const e of order.look(head, events)) send(res, e.event, e.data, e.id);
      if (order.done) break;
      if (Date.now() - started > MAX_STREAM_MS) break;
      if (Date.now() - lastBeat > HEARTBEAT_MS) {
        res.write(': keep-alive\n\n');
        lastBeat = Date.now();
      }
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  } finally {
    release();
    res.end();
  }
}

export const runEventRoutes = [
  defineRoute<{ name: string; apply_id: string }>({
    method: 'get',
    path: '/v1/incarnations/{name}/runs/{apply_id}/events',
    operationId: 'streamRunEvents',
    tag: 'Incarnations',
    permission: 'incarnations:read',
    summary: 'Follow a run (Server-Sent Events)',
    description:
      'Streams the run as `text/event-stream`: `phase` (queued, rendering, dispatching, committing), `render` (render done, ' +
      'with the number of hosts), `batch` (the first outcome of a batch), `waiting` (the run waits at a gate between batches: ' +
      '`{waiting: {for, batch, health?, since}}`, sent when the wait starts or the stream opens during one, and `{waiting: null}` ' +
      "when it ends: always before the next batch's first host and before `end`, also when the run ended between two looks of " +
      'the stream), `host` (a host finished: its status, reason, batch and step counts; ' +
      "its `id` is the event number), and `end` (the run's status, error and summary), after which the stream closes. Reconnect with the " +
      '`Last-Event-ID` header to continue after the last host event received: none is lost, also on another keeper. A stream closes after ' +
      '10 minutes (reconnect); each operator may hold 8 streams or waits per keeper (429 beyond).',
    params: runParams,
    responses: {
      200: { description: 'the event stream', contentType: 'text/event-stream', schema: { type: 'string' } },
    },
    async handler({ params, caller, deps }) {
      const head = await runHead(deps.runtime.db, params.apply_id);
      if (!head || head.incarnation !== params.name)
        throw problems.notFound(`incarnation ${params.name} has no run ${params.apply_id}`);
      const release = operatorSlots(deps).acquire(caller.aid);
      return {
        status: 200,
        body: undefined,
        stream: async (res, req) => {
          const raw = req.headers['last-event-id'];
          const last = Array.isArray(raw) ? raw[0] : raw;
          if (last !== undefined && last !== '' && !LAST_EVENT_ID.test(last)) {
            release();
            throw problems.invalid('the Last-Event-ID header is not an event id of this stream', [
              { path: '/headers/last-event-id', message: 'must be the decimal id of a host event' },
            ]);
          }
          await stream(deps, head, last ? Number(last) : 0, req, res, release);
        },
      };
    },
  }),
];
