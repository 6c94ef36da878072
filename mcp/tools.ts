// The MCP tools: one mapping table from tool name to an Operator API route (method + path). A tool's
// input schema is derived from that route's own params, query and body schemas (the ones ajv checks
// and the OpenAPI document shows), and its permission is the route's declared permission, so a tool
// can never do more, or check less, than the REST call it mirrors.
import type { RouteDef } from '../api/route';
import type { JsonSchema, ObjectSchema } from '../api/schemas/common';

export interface ToolMapping {
  name: string;
  method: RouteDef['method'];
  path: string;
  /** Shown to the model beside the route's summary: how to use the tool, in the tool's own terms. */
  hint?: string;
}

export const TOOL_TABLE: readonly ToolMapping[] = [
  { name: 'list-souls', method: 'get', path: '/v1/souls' },
  { name: 'get-soul', method: 'get', path: '/v1/souls/{sid}' },
  {
    name: 'register-soul',
    method: 'post',
    path: '/v1/souls',
    hint: 'Transport agent: the bootstrap token in the answer is shown once. Transport ssh: give the ssh block (address, user, host_key, credential_ref); no token.',
  },
  {
    name: 'check-soul',
    method: 'post',
    path: '/v1/souls/{sid}/check',
    hint: 'SSH hosts only: connects now, verifies the pinned host key and the FQDN, and reports the facts (or the reason it could not).',
  },
  {
    name: 'issue-token',
    method: 'post',
    path: '/v1/souls/{sid}/issue-token',
    hint: 'Without `force: true` an active token is a conflict (409); with it the old token is marked used and a new one issued.',
  },
  {
    name: 'revoke-soul',
    method: 'post',
    path: '/v1/souls/{sid}/revoke',
    hint: 'Cuts the host off at once (its stream closed, its certificate refused); bringing it back needs a forced token and soul init on the host.',
  },
  {
    name: 'change-soul-covens',
    method: 'patch',
    path: '/v1/souls/{sid}',
    hint: 'Replaces the covens; a coven gained brings the ready incarnations of it to the host within seconds; the answer lists the incarnations the host leaves.',
  },
  { name: 'list-services', method: 'get', path: '/v1/services' },
  {
    name: 'register-service',
    method: 'post',
    path: '/v1/services',
    hint: 'The repository is cloned and linted first: a missing repository, an unresolvable ref or a lint error is a 422 and nothing is stored.',
  },
  {
    name: 'delete-service',
    method: 'delete',
    path: '/v1/services/{name}',
    hint: 'Refused (409, naming them) while an incarnation uses the service: delete those first.',
  },
  { name: 'list-service-versions', method: 'get', path: '/v1/services/{name}/versions' },
  {
    name: 'get-service-version',
    method: 'get',
    path: '/v1/services/{name}/versions/{version}',
    hint: 'Shows the operations at the pinned commit with their inputs: what create-incarnation and run-operation accept.',
  },
  {
    name: 'publish-service-version',
    method: 'post',
    path: '/v1/services/{name}/versions',
    hint: "Pins the ref's commit now; incarnations move to it only through upgrade.",
  },
  {
    name: 'yank-service-version',
    method: 'post',
    path: '/v1/services/{name}/versions/{version}/yank',
    hint: 'Give the `reason`. The version is never offered as newer and refused for creates and upgrades; incarnations on it keep running and show `version_yanked`.',
  },
  { name: 'list-incarnations', method: 'get', path: '/v1/incarnations' },
  {
    name: 'create-incarnation',
    method: 'post',
    path: '/v1/incarnations',
    hint: 'Accepted asynchronously with an apply_id: call get-run with `wait: "30s"` to get the report when the run ends.',
  },
  { name: 'get-incarnation', method: 'get', path: '/v1/incarnations/{name}' },
  { name: 'get-incarnation-history', method: 'get', path: '/v1/incarnations/{name}/history' },
  {
    name: 'list-runs',
    method: 'get',
    path: '/v1/incarnations/{name}/runs',
    hint: 'Newest first, with cursors; each item has the apply_id to pass to get-run.',
  },
  {
    name: 'run-operation',
    method: 'post',
    path: '/v1/incarnations/{name}/runs',
    hint: 'Runs scenario/<operation>/main.yml, or with `plan_id` alone exactly the steps of a ready plan (a host that drifted since is refused); accepted asynchronously with an apply_id (follow it with get-run and `wait`).',
  },
  {
    name: 'get-run',
    method: 'get',
    path: '/v1/incarnations/{name}/runs/{apply_id}',
    hint: 'With `wait` (e.g. "30s", at most 60s) the answer comes when the run ends instead of at once: no need to call it in a loop.',
  },
  {
    name: 'plan-operation',
    method: 'post',
    path: '/v1/incarnations/{name}/plans',
    hint: 'Checks what the operation would change on every host and changes nothing; accepted with a plan_id: call get-plan with `wait: "30s"`, then run-operation with `plan_id` alone to apply exactly that plan.',
  },
  { name: 'list-plans', method: 'get', path: '/v1/incarnations/{name}/plans' },
  {
    name: 'get-plan',
    method: 'get',
    path: '/v1/incarnations/{name}/plans/{plan_id}',
    hint: 'Per host and step: would_change and the diff (files: a unified diff unless the file holds or will hold a secret, then only "secret content changed"; packages: from and to version).',
  },
  {
    name: 'set-drift-check',
    method: 'put',
    path: '/v1/incarnations/{name}/drift-check',
    hint: 'interval like "10m" checks the hosts against the committed state on a schedule (get-incarnation shows `drift`, get-plan of drift.plan_id the diffs); `auto_repair: true` puts drifted hosts back; `interval: null` stops.',
  },
  {
    name: 'unlock',
    method: 'post',
    path: '/v1/incarnations/{name}/unlock',
    hint: 'Clears error_locked; with `retry: true` the failed operation runs again.',
  },
  {
    name: 'approve-run',
    method: 'post',
    path: '/v1/incarnations/{name}/runs/{apply_id}/approve',
    hint: 'Lets a run whose `waiting.for` is "approval" (get-run) start its next batch; 409 when it is not waiting for approval.',
  },
  {
    name: 'cancel-run',
    method: 'post',
    path: '/v1/incarnations/{name}/runs/{apply_id}/cancel',
    hint: 'Stops a run whose `waiting` is not null (get-run) at its gate: no further batch, nothing committed, the incarnation error_locked naming you; 409 when it is not waiting.',
  },
  {
    name: 'upgrade-incarnation',
    method: 'post',
    path: '/v1/incarnations/{name}/upgrade',
    hint: 'With `version`: moves to that published version (forward only in state_schema_version); get-incarnation shows `newer_version` when one is published.',
  },
  {
    name: 'delete-incarnation',
    method: 'delete',
    path: '/v1/incarnations/{name}',
    hint: "Runs the service's destroy operation (accepted with an apply_id); without one it is a 409 unless `force: true`, which removes the record and touches no host.",
  },
  {
    name: 'list-archons',
    method: 'get',
    path: '/v1/archons',
    hint: 'Each operator with its role, its permissions and tokens_valid_after (the moment before which its tokens are refused).',
  },
  {
    name: 'set-archon-role',
    method: 'patch',
    path: '/v1/archons/{aid}',
    hint: 'Give `aid` and the new `role`; it holds from the next request of that operator. Demoting the last cluster-admin is a 409.',
  },
  {
    name: 'delete-archon',
    method: 'delete',
    path: '/v1/archons/{aid}',
    hint: 'Removes the operator; its tokens are refused from its next request. Its past actions stay attributed to its AID. Removing the last cluster-admin is a 409.',
  },
  {
    name: 'revoke-archon-tokens',
    method: 'post',
    path: '/v1/archons/{aid}/revoke-tokens',
    hint: 'Without `jti` every token of the operator issued so far is refused; with `jti` (list-activity names it per call) only that one. The operator stays.',
  },
  {
    name: 'list-activity',
    method: 'get',
    path: '/v1/activity',
    hint: 'Who changed what, newest first: filter by actor (an AID), target (a path such as /v1/incarnations/web, and what lies under it), since/until (RFC 3339).',
  },
  {
    name: 'query-souls',
    method: 'get',
    path: '/v1/souls',
    hint: 'A fact query: `where` is CEL over soulprint.self (e.g. `soulprint.self.os_release == "12"`), `fields` the facts to show, `count_by` a fact to count matches by. Answered from stored facts with their age (`soulprint_age_s`); no host is contacted unless `refresh: true` (the connected souls are asked for their facts first, up to 5 s).',
  },
  {
    name: 'run-module',
    method: 'post',
    path: '/v1/executions',
    hint: 'Runs one core module once on the hosts `target` selects (covens, sids, where). Preview the selection with query-souls first; `dry_run: true` changes nothing. Above 10 hosts send `confirm: true`. Accepted with an id: read the answers with get-execution.',
  },
  {
    name: 'get-execution',
    method: 'get',
    path: '/v1/executions/{id}',
    hint: 'Per-host status (ok, changed, failed, unknown) and output; `status` done with the summary when every host answered or timed out.',
  },
];

/** Where each argument goes on the REST call it stands for. */
export type ArgPlace = 'params' | 'query' | 'body';

export interface ToolDef {
  name: string;
  title: string;
  description: string;
  route: RouteDef;
  inputSchema: ObjectSchema;
  /** Argument name -> where the route expects it. */
  places: Record<string, ArgPlace>;
  readOnly: boolean;
}

/**
 * One object schema for all of a route's inputs. A name declared in both the query and the body (as
 * `force` on issue-token) is the same field, so it appears once and travels in the body.
 */
export function deriveInput(route: RouteDef): { inputSchema: ObjectSchema; places: Record<string, ArgPlace> } {
  const properties: Record<string, JsonSchema> = {};
  const places: Record<string, ArgPlace> = {};
  const add = (schema: ObjectSchema | undefined, place: ArgPlace) => {
    for (const [k, v] of Object.entries(schema?.properties ?? {})) {
      properties[k] = v;
      places[k] = place;
    }
  };
  add(route.query, 'query');
  add(route.body?.schema, 'body');
  add(route.params, 'params');
  const required = [
    ...((route.params?.required as string[] | undefined) ?? []),
    ...(route.body?.required ? ((route.body.schema.required as string[] | undefined) ?? []) : []),
  ];
  const inputSchema: ObjectSchema = { type: 'object', additionalProperties: false, properties };
  if (required.length > 0) inputSchema.required = [...new Set(required)];
  return { inputSchema, places };
}

/**
 * The tools whose route is in `routes`. A mapping whose route does not exist (yet) is left out
 * rather than served broken; `missing` names them so the caller can say so once at startup.
 */
export function buildTools(
  routes: readonly RouteDef[],
  table: readonly ToolMapping[] = TOOL_TABLE,
): { tools: ToolDef[]; missing: ToolMapping[] } {
  const tools: ToolDef[] = [];
  const missing: ToolMapping[] = [];
  for (const m of table) {
    const route = routes.find((r) => r.method === m.method && r.path === m.path);
    if (!route) {
      missing.push(m);
      continue;
    }
    const description = [route.summary + '.', route.description, m.hint, `Needs the permission ${route.permission}.`]
      .filter((s): s is string => typeof s === 'string' && s !== '')
      .join(' ');
    tools.push({
      name: m.name,
      title: route.summary,
      description,
      route,
      ...deriveInput(route),
      readOnly: route.method === 'get',
    });
  }
  return { tools, missing };
}
