// Approving a run that waits at a gate between `serial:` batches (docs/runs.md "Gates between
// batches"). Its own permission, `runs:approve` (api/roles.ts: cluster-admin and operator hold it,
// viewer does not), so a role can be given the approval without the right to start runs. The
// activity stream records the call with its apply_id like every mutating call (api/activity.ts).
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
      'while it waits ends the run `error_locked` with nothing more dispatched.',
    params: runParams,
    responses: { 200: { description: 'the run goes on with its next batch', schema: runApprovedSchema } },
    async handler({ params, deps }) {
      const body = await deps.runs.approve({ name: params.name, applyId: params.apply_id });
      return { status: 200, body };
    },
  }),
];
