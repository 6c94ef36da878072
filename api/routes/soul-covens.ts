// PATCH /v1/souls/{sid} {covens}: moving a host between covens (issue 17, item 5). The covens it
// gains converge like a new soul (runs/converge.ts); the incarnations it leaves are reported, not run:
// what they put on the host stays there, unmanaged, and the operator decides what to do with it.
import { changeCovens, incarnationsOfCovens } from '../../db/repos/convergence';
import { getSouls } from '../../db/repos/souls';
import { problems } from '../problems';
import { defineRoute } from '../route';
import { changeCovensBody, covensChangedSchema, type ChangeCovensInput } from '../schemas/soul-covens';
import { sidParams } from '../schemas/souls';
import { soulView } from './souls';

export const soulCovenRoutes = [
  defineRoute<{ sid: string }, Record<string, never>, ChangeCovensInput>({
    method: 'patch',
    path: '/v1/souls/{sid}',
    operationId: 'changeSoulCovens',
    tag: 'Souls',
    permission: 'souls:update',
    summary: "Change a soul's covens",
    description:
      'Replaces the covens. For a coven it gains, the ready incarnations of its covens are brought to it within seconds, as ' +
      'runs on that host alone (docs/runs.md, "New hosts converge"). Incarnations it no longer carries a coven of are listed in ' +
      '`left_incarnations`; nothing is run for them and what they configured stays on the host.',
    params: sidParams,
    body: { schema: changeCovensBody, required: true },
    responses: {
      200: { description: 'the soul with its new covens, and what the change does', schema: covensChangedSchema },
    },
    async handler({ params, body, deps }) {
      const db = deps.runtime.db;
      const before = (await getSouls(db, [params.sid])).get(params.sid);
      if (!before) throw problems.notFound(`soul ${params.sid} is not registered`);
      const oldIncarnations = await incarnationsOfCovens(db, before.covens);
      const changed = await changeCovens(db, params.sid, body.covens);
      if (!changed) throw problems.notFound(`soul ${params.sid} is not registered`);
      const now = new Set((await incarnationsOfCovens(db, body.covens)).map((i) => i.name));
      const soul = (await getSouls(db, [params.sid])).get(params.sid)!;
      const gained = body.covens.filter((c) => !changed.before.includes(c));
      return {
        status: 200,
        body: {
          soul: soulView(soul),
          gained_covens: gained,
          lost_covens: changed.before.filter((c) => !body.covens.includes(c)),
          converging: gained.length > 0 && soul.onboarded_at !== null,
          left_incarnations: oldIncarnations.map((i) => i.name).filter((n) => !now.has(n)),
        },
      };
    },
  }),
];
