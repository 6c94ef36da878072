// The MCP listener's HTTP app (issue 6): the official SDK over streamable HTTP, stateless. Every
// request carries `Authorization: Bearer <operator JWT>` and passes the same registry gate and
// authentication as /v1 (401 without a valid token, before any MCP message is read); then a fresh
// MCP server bound to that caller answers it. Stateless means no session to steal or expire: the
// token is checked on every request, exactly as the REST API does.
import express, { type Request, type Response } from 'express';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { createApiFallback, problemErrorHandler } from '../api';
import { authenticate, registryGate } from '../api/auth';
import { jsonBody } from '../api/body';
import { operatorRateLimit } from '../api/rate-limit';
import type { ApiDeps } from '../api/deps';
import type { Caller, RouteDef } from '../api/route';
import { VERSION } from '../common/version';
import { createInvoker, MCP_RATE_LIMITED, type ToolInvoker } from './invoke';
import { buildTools, type ToolDef } from './tools';

export const MCP_PATH = '/mcp';

/** One MCP server for one request of one caller. Low-level handlers serve the JSON Schemas as they are. */
function serverFor(
  deps: ApiDeps,
  res: Response,
  caller: Caller,
  tools: ToolDef[],
  invokers: Map<string, ToolInvoker>,
): McpServer {
  const mcp = new McpServer({ name: 'keeper', version: VERSION }, { capabilities: { tools: {} } });
  // McpServer.registerTool wants zod shapes; our schemas are JSON Schema already (the API's own), so
  // the tool requests are answered on the underlying protocol server instead of translating them.
  mcp.server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: tools.map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema: t.inputSchema as { type: 'object'; properties?: Record<string, object> },
      annotations: {
        title: t.title,
        readOnlyHint: t.readOnly,
        destructiveHint: t.route.method === 'delete',
        openWorldHint: false,
      },
    })),
  }));
  mcp.server.setRequestHandler(CallToolRequestSchema, async (req) => {
    // A tool call is an API call: it takes a token from the operator's one budget (api.rate_limit),
    // shared with the Operator API, and is refused with a protocol error and the wait when it is empty.
    const limit = operatorRateLimit(deps);
    const wait = limit.take(caller.aid);
    if (wait > 0) {
      if (!res.headersSent) res.setHeader('Retry-After', String(wait));
      throw new McpError(MCP_RATE_LIMITED, limit.refusal(caller.aid, wait), { status: 429, retry_after: wait });
    }
    const invoke = invokers.get(req.params.name);
    if (!invoke) throw new McpError(ErrorCode.InvalidParams, `no tool named ${req.params.name}`);
    return invoke(req.params.arguments ?? {}, caller);
  });
  return mcp;
}

/**
 * A tools/call whose arguments hold an own `__proto__` key, answered as invalid params naming it.
 * The SDK's request schema drops that key without a word (zod's record parse skips it), so the
 * tool would run as if the argument had not been sent; every other unknown argument is refused by
 * name (mcp/invoke.ts), and this one must be too. Null when the request has none.
 */
export function protoArgument(body: unknown): object | null {
  const messages = Array.isArray(body) ? body : [body];
  const bad = messages.filter((m) => {
    const msg = m as { method?: unknown; params?: { arguments?: unknown } } | null | undefined;
    const args = msg?.params?.arguments;
    return (
      msg?.method === 'tools/call' && typeof args === 'object' && args !== null && Object.hasOwn(args, '__proto__')
    );
  });
  if (bad.length === 0) return null;
  const error = (id: unknown) => ({
    jsonrpc: '2.0',
    id: id ?? null,
    error: {
      code: ErrorCode.InvalidParams,
      message:
        'invalid params: /arguments/__proto__ is not a known argument of this tool (the name __proto__ is refused)',
      data: { errors: [{ path: '/arguments/__proto__', message: 'is not a known argument of this tool' }] },
    },
  });
  // A batch is refused whole: no call of it runs with an argument silently dropped.
  return Array.isArray(body)
    ? messages.map((m) => error((m as { id?: unknown } | null)?.id))
    : error((body as { id?: unknown }).id);
}

export function createMcpApp(deps: ApiDeps, routes: readonly RouteDef[]): express.Express {
  const { runtime } = deps;
  const { tools, missing } = buildTools(routes);
  if (missing.length > 0)
    runtime.log.info('mcp: tools whose API route does not exist are not served', { tools: missing.map((m) => m.name) });
  const invokers = new Map(
    tools.map((t) => [
      t.name,
      createInvoker(t, deps, (err) => {
        const e = err as { name?: unknown; message?: unknown };
        runtime.log.error('mcp tool failed', {
          tool: t.name,
          error_name: String(e?.name ?? 'unknown'),
          error: String(e?.message ?? err),
        });
      }),
    ]),
  );

  const app = express();
  app.disable('x-powered-by');
  app.use(
    MCP_PATH,
    registryGate(runtime.db),
    authenticate(runtime.db, runtime.signingKey, runtime.config.auth.jwt.issuer),
  );
  app.post(MCP_PATH, jsonBody, async (req: Request, res: Response) => {
    const refused = protoArgument(res.locals.body);
    if (refused !== null) {
      res.status(200).json(refused);
      return;
    }
    const mcp = serverFor(deps, res, res.locals.caller as Caller, tools, invokers);
    // Stateless: no session id, and plain JSON answers instead of an SSE stream per request.
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void mcp.close();
    });
    await mcp.connect(transport);
    await transport.handleRequest(req, res, res.locals.body);
  });
  // A stateless server has no stream to resume (GET) and no session to end (DELETE).
  app.all(MCP_PATH, (_req: Request, res: Response) => {
    res
      .status(405)
      .set('Allow', 'POST')
      .json({
        jsonrpc: '2.0',
        error: { code: -32000, message: 'this MCP endpoint is stateless: POST only' },
        id: null,
      });
  });
  app.use(createApiFallback(runtime.log));
  // The fallback router only answers errors raised inside it; the gate's 401/403 are raised here.
  app.use(problemErrorHandler(runtime.log));
  return app;
}
