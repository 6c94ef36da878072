// The /ui execution form's live preview (issue 34, docs/executions.md "In /ui"): how many hosts a
// target selects (the very selection POST /v1/executions would make, runs/soul-query.ts), the first
// SIDs, and what the caller may run: the modules of its role's allow-list and the confirmation
// threshold. Nothing is recorded, no host is contacted.
import { MODULES } from '../../scenario/modules';
import { QueryError, selectSouls } from '../../runs/index';
import { problems } from '../problems';
import { executionModulesOf } from '../roles';
import { defineRoute } from '../route';
import { executionPreviewBody, executionPreviewSchema } from '../schemas/executions';

const LISTED = 50;

interface PreviewBody {
  target: { covens?: string[]; sids?: string[]; where?: string };
}

export const executionPreviewRoutes = [
  defineRoute<Record<string, never>, Record<string, never>, PreviewBody>({
    method: 'post',
    path: '/v1/executions/preview',
    operationId: 'previewExecution',
    tag: 'Executions',
    // The first step of running one (a POST, so not a viewer's): whoever may run executions may preview them.
    permission: 'executions:run',
    summary: 'Preview the hosts an execution would select',
    description:
      'Answers how many hosts `target` selects (as POST /v1/executions would: covens, sids, `where` over the stored facts; ' +
      'an empty target selects none), the first 50 SIDs, the modules the caller may run and `confirm_above`. Nothing is started.',
    body: { schema: executionPreviewBody, required: true },
    responses: { 200: { description: 'the selection', schema: executionPreviewSchema } },
    async handler({ body, caller, deps }) {
      const limits = deps.runtime.config.executions;
      const allowed = executionModulesOf(caller.role, limits.modules);
      const modules = [...MODULES.keys()].filter((m) => allowed.includes('*') || allowed.includes(m)).sort();
      const t = body.target;
      let sids: string[] = [];
      if (t.covens?.length || t.sids?.length || t.where !== undefined) {
        try {
          sids = (await selectSouls(deps.runtime.db, t)).map((s) => s.sid);
        } catch (e) {
          if (e instanceof QueryError)
            throw problems.invalid(`target.where: ${e.message}`, [{ path: '/body/target/where', message: e.message }]);
          throw e;
        }
      }
      return {
        status: 200,
        body: { selected: sids.length, sids: sids.slice(0, LISTED), modules, confirm_above: limits.confirm_above },
      };
    },
  }),
];
