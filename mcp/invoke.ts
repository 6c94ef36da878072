// Runs a tool as the REST call it mirrors: the route's permission against the caller's role, the
// route's own validators on the arguments split back into path, query and body, then the route's
// handler. The answer becomes a tool result: the JSON body on success, the problem on failure
// (`isError`), so a model sees the same message an operator sees in the API or the UI.
import { McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { applyIdOf, executionIdOf, recordActivity } from '../api/activity';
import { checkPermission } from '../api/auth';
import { canonicalPath } from '../api/mount';
import type { ApiDeps } from '../api/deps';
import { ApiProblem, problems, toProblem, type FieldError } from '../api/problems';
import type { Caller } from '../api/route';
import { CallerRefused } from '../api/stream-auth';
import { compileQueryValidator, compileValidator, fieldErrors, type Location } from '../api/validate';
import type { ArgPlace, ToolDef } from './tools';

/**
 * JSON-RPC error codes of this server (the implementation-defined range -32000..-32099, away from
 * the SDK's own): a tool call refused by the operator's rate limit (data: `status`, `retry_after`
 * seconds), and a held call (a `wait`) whose caller was refused meanwhile (token revoked, operator
 * removed or demoted; data: `status`, `type`). Both are about the call, not the tool's answer, so
 * they are protocol errors rather than `isError` results.
 */
export const MCP_RATE_LIMITED = -32029;
export const MCP_CALLER_REFUSED = -32040;

export type ToolInvoker = (args: Record<string, unknown>, caller: Caller) => Promise<CallToolResult>;

// The REST errors name /body/x, /query/x, /path/x; a tool has one argument object.
function asArgumentErrors(errors: FieldError[]): FieldError[] {
  return errors.map((e) => ({ ...e, path: e.path.replace(/^\/(body|query|path)/, '/arguments') }));
}

export function problemResult(problem: ApiProblem): CallToolResult {
  const body = problem.body();
  const fields = (body.errors ?? []).map((e) => `\n- ${e.path}: ${e.message}`).join('');
  return {
    isError: true,
    content: [{ type: 'text', text: `${body.status} ${body.title}: ${body.detail}${fields}` }],
    structuredContent: { ...body },
  };
}

export function createInvoker(tool: ToolDef, deps: ApiDeps, onServerError: (err: unknown) => void): ToolInvoker {
  const { route } = tool;
  const validators: Partial<Record<'params' | 'body', ReturnType<typeof compileValidator>>> = {
    params: route.params && compileValidator(route.params, 'path'),
    body: route.body && compileValidator(route.body.schema, 'body'),
  };
  // The query's check is the REST call's own (its integer rule, then the schema), not a second copy.
  const queryCheck = route.query && compileQueryValidator(route.query);
  const location: Record<'params' | 'body', Location> = { params: 'path', body: 'body' };

  // A tool that changes something is one row of the activity stream, as its REST call is (api/activity.ts).
  const record = async (caller: Caller, params: Record<string, unknown>, status: number, body?: unknown) => {
    if (route.method === 'get') return;
    // The same canonical path the REST call records (decoded names), so one target filter finds both.
    const names: Record<string, string> = {};
    for (const [k, v] of Object.entries(params)) if (typeof v === 'string') names[k] = v;
    const target = canonicalPath(route.path, names);
    await recordActivity(deps, {
      actor: caller.aid,
      actorKind: 'operator',
      jti: caller.jti ?? null,
      source: caller.source ?? null,
      via: 'mcp',
      action: `mcp ${tool.name}`,
      target,
      status,
      applyId: applyIdOf(body),
      executionId: executionIdOf(body),
    });
  };

  return async (args, caller) => {
    const params: Record<string, unknown> = {};
    try {
      checkPermission(caller, route.permission);
      const parts: Record<ArgPlace, Record<string, unknown>> = { params: {}, query: {}, body: {} };
      const unknown: FieldError[] = [];
      for (const [k, v] of Object.entries(args)) {
        // Own properties only: `constructor` or `toString` is no argument of any tool.
        const place = Object.hasOwn(tool.places, k) ? tool.places[k] : undefined;
        if (place === 'params') params[k] = v;
        if (place) parts[place][k] = v;
        else unknown.push({ path: `/arguments/${k}`, message: 'is not a known argument of this tool' });
      }
      if (unknown.length > 0) throw problems.invalid('an argument is not known', unknown);
      // An optional body with no arguments for it is an absent body, as an empty POST is over HTTP.
      const hasBody = route.body !== undefined && (route.body.required || Object.keys(parts.body).length > 0);
      for (const place of ['params', 'query', 'body'] as const) {
        if (place === 'query') {
          const errors = queryCheck ? queryCheck(parts.query) : [];
          if (errors.length > 0) throw problems.invalid('an argument is not valid', asArgumentErrors(errors));
          continue;
        }
        const v = validators[place];
        if (!v || (place === 'body' && !hasBody)) continue;
        if (!v(parts[place]))
          throw problems.invalid('an argument is not valid', asArgumentErrors(fieldErrors(location[place], v.errors)));
      }
      const result = await route.handler({
        params: parts.params,
        query: parts.query,
        body: hasBody ? parts.body : undefined,
        caller,
        deps,
      });
      const body = result.body;
      await record(caller, params, result.status, body);
      const structured =
        typeof body === 'object' && body !== null && !Array.isArray(body)
          ? (body as Record<string, unknown>)
          : undefined;
      return {
        // A 204 (a removal) has no body; the tool still answers with a text saying it was done.
        content: [
          {
            type: 'text',
            text: body === undefined ? `done (${result.status}, nothing to show)` : JSON.stringify(body, null, 2),
          },
        ],
        ...(structured ? { structuredContent: structured } : {}),
      };
    } catch (err) {
      if (err instanceof CallerRefused) {
        await record(caller, params, err.status);
        throw new McpError(MCP_CALLER_REFUSED, err.detail, { status: err.status, type: err.body().type });
      }
      const problem = toProblem(err);
      if (problem.status >= 500) onServerError(err);
      await record(caller, params, problem.status);
      return problemResult(problem);
    }
  };
}
