// Following a run without polling: GET /v1/incarnations/{name}/runs/{apply_id}/events streams the
// run as Server-Sent Events, resumable with Last-Event-ID. Any keeper can serve it: the events are
// read from PostgreSQL, where every host outcome is numbered in commit order
// (db/migrations/20261124001001_run_host_events.ts), so a reconnect to another keeper loses nothing.
import type { Request, Response } from 'express';
import { hostEventsAfter, runHead, type RunHead } from '../../db/repos/run-events';
import type { ApiDeps } from '../deps';
import { problems } from '../problems';
import { defineRoute } from '../route';
import { runParams } from '../schemas/runs';
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
  let phase = '';
  let rendered = false;
  const batches = new Set<number>();
  // What the run waits for at a gate, as last sent: a stream opened while the run waits says so first.
  let waiting = 'null';
  let head: RunHead | undefined = head0;
  try {
    while (!closed) {
      // Head first, then events: once the head says the run ended, every host outcome is committed
      // (the commit activity runs after dispatch recorded them all), so the events read next are all.
      if (head === undefined) head = await runHead(db, head0.apply_id);
      if (!head) break;
      if (head.phase !== phase && head.status === 'running') {
        phase = head.phase;
        send(res, 'phase', { phase });
      }
      const nowWaiting = JSON.stringify(head.status === 'running' ? (head.waiting ?? null) : null);
      if (nowWaiting !== waiting && head.status === 'running') {
        waiting = nowWaiting;
        send(res, 'waiting', { waiting: head.waiting ?? null });
      }
      if (
        !rendered &&
        (head.phase === 'dispatching' || head.phase === 'committing' || head.phase === 'done') &&
        head.hosts > 0
      ) {
        rendered = true;
        send(res, 'render', { hosts: head.hosts });
      }
      for (;;) {
        const events = await hostEventsAfter(db, head0.apply_id, lastSeq);
        for (const e of events) {
          if (e.batch !== null && !batches.has(e.batch)) {
            batches.add(e.batch);
            send(res, 'batch', { batch: e.batch });
          }
          send(
            res,
            'host',
            {
              sid: e.sid,
              status: e.status,
              reason: e.reason,
              batch: e.batch,
              steps: e.steps,
              changed: e.changed,
              failed: e.failed,
            },
            e.seq,
          );
          lastSeq = e.seq;
        }
        if (events.length < 500) break;
      }
      if (head.status !== 'running') {
        send(res, 'end', {
          status: head.status,
          error: head.error,
          summary: head.summary,
          finished_at: head.finished_at,
        });
        break;
      }
      if (Date.now() - started > MAX_STREAM_MS) break;
      if (Date.now() - lastBeat > HEARTBEAT_MS) {
        res.write(': keep-alive\n\n');
        lastBeat = Date.now();
      }
      await new Promise((r) => setTimeout(r, POLL_MS));
      head = undefined;
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
      'when it ends and the next batch starts), `host` (a host finished: its status, reason, batch and step counts; ' +
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
