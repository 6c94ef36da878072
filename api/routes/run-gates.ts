// Deciding a run that waits at a gate between `serial:` batches (docs/runs.md "Gates between
// batches"): approve it (the next batch starts) or cancel it (none does). One permission for both,
// `runs:approve` (api/roles.ts: cluster-admin and operator hold it, viewer does not): whoever may
// say yes at a gate may say no, and a role can be given that decision without the right to start
// runs. The activity stream records either call with its apply_id like every mutating call
// (api/activity.ts).
import { defineRoute } from '../route';
import { runParams } from '../schemas/runs';
import { named } from '../schemas/common';

export const runApprovedSchema = named('RunApproved', {
  type: 'object',
  additionalProperties: false,
  required: ['apply_id', 'incarnation', 'batch', 'waited_ms'],
  properties: {
    apply_id: { type: 'string' },
    incarnation: { type: 'string' },
    batch: { type: 'integer', description: 'the batch after which the run waited; the next one starts now' },
    waited_ms: { type: 'integer', description: 'how long the run waited for approval' },
  },
});

export const runCancelledSchema = named('RunCancelled', {
  type: 'object',
  additionalProperties: false,
  required: ['apply_id', 'incarnation', 'batch', 'waited_for', 'run'],
  properties: {
    apply_id: { type: 'string' },
    incarnation: { type: 'string' },
    batch: { type: 'integer', description: 'the batch after which the run waited; no later batch starts' },
    waited_for: { type: 'string', enum: ['health', 'approval'], description: 'what the run waited for' },
    run: {
      type: 'string',
      description: 'the run report URL path: `failed`, `cancelled by <AID>`, once the run has closed',
    },
  },
});

export const runGateRoutes = [
  defineRoute<{ name: string; apply_id: string }>({
    method: 'post',
    path: '/v1/incarnations/{name}/runs/{apply_id}/approve',
    operationId: 'approveRun',
    tag: 'Incarnations',
    permission: 'runs:approve',
    summary: 'Approve a run waiting at a gate',
    description:
      "Lets a run that waits for approval at its scenario's `gate:` (after a `serial:` batch; its `waiting.for` is `approval`) " +
      'go on with the next batch. 409 when the run is not waiting for approval (it runs, waits for its health check, or has ended): ' +
      "nothing is sent. The wait is in the run's Temporal workflow, so it survives keeper restarts; cancelling the workflow in Temporal " +
      'while it waits ends the run `error_locked` with nothing more dispatched (POST .../cancel does the same and names the operator).',
    params: runParams,
    responses: { 200: { description: 'the run goes on with its next batch', schema: runApprovedSchema } },
    async handler({ params, deps }) {
      const body = await deps.runs.approve({ name: params.name, applyId: params.apply_id });
      return { status: 200, body };
    },
  }),
  defineRoute<{ name: string; apply_id: string }>({
    method: 'post',
    path: '/v1/incarnations/{name}/runs/{apply_id}/cancel',
    operationId: 'cancelRun',
    tag: 'Incarnations',
    permission: 'runs:approve',
    summary: 'Cancel a run waiting at a gate',
    description:
      "Stops a run that waits at its scenario's `gate:` (for its health check or for approval; its `waiting` is not null): " +
      'no further batch is dispatched, the hosts done so far stay in the report and the others are `skipped`, nothing is committed, ' +
      'and the run ends `failed` with the incarnation `error_locked`, the error starting `cancelled by <AID>` (unlock it as after any failed run). ' +
      '202: the run closes within moments; follow the run report. 409 when the run is not waiting (a batch being dispatched is never cut ' +
      'in the middle) or has ended: nothing is sent.',
    params: runParams,
    responses: { 202: { description: 'the run stops at its gate', schema: runCancelledSchema } },
    async handler({ params, caller, deps }) {
      const body = await deps.runs.cancel({ name: params.name, applyId: params.apply_id, by: caller.aid });
      return { status: 202, body };
    },
  }),
];
