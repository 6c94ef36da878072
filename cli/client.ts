// The CLI's HTTP client. It finds every call in the keeper's own OpenAPI document by operationId, so
// a command can never call a path or method the API does not have: the route table is the one
// source of truth, and a keeper without an operation (an older version) gets a clear message.
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { takeSseEvents, type SseEvent } from '../common/sse';
import { CliError, ExitCode, exitCodeForStatus } from './errors';

export interface Target {
  /** Base URL of the Operator API, e.g. https://keeper.example.org:8080 */
  url: string;
  /** The operator's JWT; absent only for calls that need none (the OpenAPI document). */
  token?: string;
  /** PEM file of the CA that must have signed the keeper's certificate (pinned: no other CA counts). */
  caFile?: string;
}

export interface Problem {
  type?: string;
  title?: string;
  status?: number;
  detail?: string;
  errors?: { path: string; message: string }[];
  missing_permission?: string;
}

export interface Response {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: unknown;
}

interface Operation {
  method: string;
  path: string;
}

const TIMEOUT_MS = 30_000;

export class KeeperClient {
  private operations: Map<string, Operation> | undefined;
  private readonly ca: Buffer | undefined;

  constructor(readonly target: Target) {
    if (target.caFile !== undefined) {
      try {
        this.ca = fs.readFileSync(target.caFile);
      } catch (err) {
        throw new CliError(
          ExitCode.Usage,
          `cannot read the CA file ${target.caFile}: ${(err as Error).message}`,
          "point --ca (or the cluster's ca_file) at the PEM file of the keeper's CA",
        );
      }
    }
  }

  /** Raw request to a path of the keeper; answers any status (the caller decides). */
  async request(
    method: string,
    path: string,
    opts: { query?: Record<string, unknown>; body?: unknown; auth?: boolean } = {},
  ): Promise<Response> {
    const url = new URL(path, this.target.url.endsWith('/') ? this.target.url : `${this.target.url}/`);
    for (const [k, v] of Object.entries(opts.query ?? {})) {
      if (v === undefined || v === null || v === false) continue;
      url.searchParams.set(k, String(v));
    }
    const headers: Record<string, string> = { Accept: 'application/json, application/problem+json' };
    if (opts.auth !== false) {
      if (!this.target.token) {
        throw new CliError(
          ExitCode.Auth,
          'no operator token for this cluster',
          'log in with `keeperctl login <cluster> --url <url> --token-file <file>`, or set KEEPER_TOKEN',
        );
      }
      headers['Authorization'] = `Bearer ${this.target.token}`;
    }
    let payload: Buffer | undefined;
    if (opts.body !== undefined) {
      payload = Buffer.from(JSON.stringify(opts.body));
      headers['Content-Type'] = 'application/json';
      headers['Content-Length'] = String(payload.length);
    }
    const isHttps = url.protocol === 'https:';
    if (!isHttps && url.protocol !== 'http:') {
      throw new CliError(
        ExitCode.Usage,
        `the keeper URL ${this.target.url} is neither http nor https`,
        'use a URL like https://keeper.example.org:8080',
      );
    }
    const options: https.RequestOptions = { method: method.toUpperCase(), headers, timeout: TIMEOUT_MS };
    if (isHttps && this.ca) options.ca = this.ca;
    return new Promise<Response>((resolve, reject) => {
      const req = (isHttps ? https : http).request(url, options, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown = text;
          if (text.length > 0 && /json/.test(String(res.headers['content-type'] ?? ''))) {
            try {
              body = JSON.parse(text);
            } catch {
              body = text;
            }
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
        });
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new Error(`no answer within ${TIMEOUT_MS / 1000} s`)));
      req.on('error', (err) =>
        reject(
          new CliError(
            ExitCode.Server,
            `cannot reach the keeper at ${this.target.url}: ${err.message}`,
            isHttps && /certificate|self.signed|issuer/i.test(err.message)
              ? "the keeper's certificate is not signed by the pinned CA; check --ca / the cluster's ca_file"
              : 'check the URL (keeperctl clusters) and that the keeper is running',
          ),
        ),
      );
      if (payload) req.write(payload);
      req.end();
    });
  }

  private async loadOperations(): Promise<Map<string, Operation>> {
    if (this.operations) return this.operations;
    const r = await this.request('get', '/openapi.json', { auth: false });
    if (r.status !== 200 || typeof r.body !== 'object' || r.body === null) {
      throw new CliError(
        ExitCode.Server,
        `the keeper at ${this.target.url} did not serve its OpenAPI document (status ${r.status})`,
        'check that the URL points at the Operator API listener (listen.openapi)',
      );
    }
    const doc = r.body as { paths?: Record<string, Record<string, { operationId?: string }>> };
    const ops = new Map<string, Operation>();
    for (const [p, methods] of Object.entries(doc.paths ?? {})) {
      for (const [m, op] of Object.entries(methods)) {
        if (op && typeof op === 'object' && typeof op.operationId === 'string')
          ops.set(op.operationId, { method: m, path: p });
      }
    }
    this.operations = ops;
    return ops;
  }

  /** The method and path of an operation, from the keeper's OpenAPI document. */
  async operation(operationId: string): Promise<Operation | undefined> {
    return (await this.loadOperations()).get(operationId);
  }

  /**
   * Follows a Server-Sent Events operation until `onEvent` returns true (done) or the stream ends;
   * resolves with the last event id seen, so the caller can reconnect after it.
   */
  async events(
    operationId: string,
    params: Record<string, string>,
    lastEventId: string | undefined,
    onEvent: (e: ServerEvent) => boolean,
  ): Promise<{ lastEventId: string | undefined; done: boolean }> {
    const op = await this.operation(operationId);
    if (!op) throw new CliError(ExitCode.Server, `the keeper does not offer ${operationId}`);
    const path = op.path.replace(/\{([^}]+)\}/g, (_m, name: string) => encodeURIComponent(params[name] ?? ''));
    const url = new URL(path, this.target.url.endsWith('/') ? this.target.url : `${this.target.url}/`);
    const isHttps = url.protocol === 'https:';
    const headers: Record<string, string> = {
      Accept: 'text/event-stream',
      Authorization: `Bearer ${this.target.token ?? ''}`,
    };
    if (lastEventId) headers['Last-Event-ID'] = lastEventId;
    const options: https.RequestOptions = { method: 'GET', headers };
    if (isHttps && this.ca) options.ca = this.ca;
    return new Promise((resolve, reject) => {
      let last = lastEventId;
      let done = false;
      const req = (isHttps ? https : http).request(url, options, (res) => {
        if ((res.statusCode ?? 0) >= 400) {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            let body: unknown = Buffer.concat(chunks).toString('utf8');
            try {
              body = JSON.parse(body as string);
            } catch {
              /* keep text */
            }
            reject(problemError({ status: res.statusCode ?? 0, headers: res.headers, body }));
          });
          return;
        }
        let buf = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          if (done) return;
          const taken = takeSseEvents(buf + chunk);
          buf = taken.rest;
          for (const e of taken.events) {
            if (e.id) last = e.id;
            if (onEvent(e)) {
              done = true;
              req.destroy();
              resolve({ lastEventId: last, done });
              return;
            }
          }
        });
        res.on('end', () => {
          if (!done) resolve({ lastEventId: last, done: false });
        });
        res.on('error', () => {
          if (!done) resolve({ lastEventId: last, done: false });
        });
      });
      req.on('error', (err) => {
        if (done) return;
        if (last !== lastEventId) resolve({ lastEventId: last, done: false });
        else
          reject(
            new CliError(
              ExitCode.Server,
              `cannot reach the keeper at ${this.target.url}: ${err.message}`,
              'check the URL and that the keeper is running',
            ),
          );
      });
      req.end();
    });
  }

  /**
   * Calls an operation by its operationId. Path parameters fill `{name}` placeholders; a problem
   * answer becomes a CliError with the exit code of its class.
   */
  async call(
    operationId: string,
    opts: { params?: Record<string, string>; query?: Record<string, unknown>; body?: unknown } = {},
  ): Promise<Response> {
    const op = await this.operation(operationId);
    if (!op) {
      throw new CliError(
        ExitCode.Server,
        `the keeper at ${this.target.url} does not offer ${operationId}`,
        'it may be an older version than this keeperctl; upgrade the keeper or use a matching keeperctl',
      );
    }
    const path = op.path.replace(/\{([^}]+)\}/g, (_m, name: string) => {
      const v = opts.params?.[name];
      if (v === undefined) throw new Error(`internal: ${operationId} needs the path parameter ${name}`);
      return encodeURIComponent(v);
    });
    let r = await this.request(op.method, path, { query: opts.query, body: opts.body });
    // Rate limited: wait as told and try again, a few times, rather than fail a script mid-way.
    for (let attempt = 0; r.status === 429 && attempt < 3; attempt++) {
      const wait = Number(r.headers['retry-after'] ?? '1');
      if (!Number.isFinite(wait) || wait > 30) break;
      await new Promise((res) => setTimeout(res, Math.max(1, wait) * 1000));
      r = await this.request(op.method, path, { query: opts.query, body: opts.body });
    }
    if (r.status >= 400) throw problemError(r);
    return r;
  }
}

export type ServerEvent = SseEvent;

/**
 * What keeperctl command resolves a 409, read from the keeper's detail (the API's wording is stable:
 * tests pin it); each names a command and flag that exist. Else the detail itself says what holds it.
 */
const CONFLICT_HINTS: Array<[RegExp, (m: RegExpExecArray) => string]> = [
  [
    /incarnation (\S+) is error_locked/,
    (m) => `fix the cause, then keeperctl incarnations unlock ${m[1]} (add --retry to run the failed operation again)`,
  ],
  [
    /incarnation (\S+) is applying run ([^\s;]+)/,
    (m) => `follow it with: keeperctl incarnations run-report ${m[1]} ${m[2]}`,
  ],
  [/remove the record of incarnation (\S+)/, (m) => `keeperctl incarnations delete ${m[1]} --force`],
  [
    /plan \S+ (?:is stale|expired|was applied|cannot be applied)[^]*POST \/v1\/incarnations\/([^/]+)\/plans/,
    (m) => `make a new plan: keeperctl incarnations plan ${m[1]} <operation>`,
  ],
  [
    /upgrade with POST \/v1\/incarnations\/([^/]+)\/upgrade \{"version": "([^"]+)"\}/,
    (m) => `keeperctl incarnations upgrade ${m[1]} --version ${m[2]}`,
  ],
  [
    /soul (\S+) (?:is revoked|is already onboarded|has an active bootstrap token)/,
    (m) => `keeperctl souls issue-token ${m[1]} --force`,
  ],
  [/version \S+ of service (\S+) was yanked/, (m) => `choose another version: keeperctl services versions ${m[1]}`],
];

export function conflictHint(detail: string): string {
  for (const [re, hint] of CONFLICT_HINTS) {
    const m = re.exec(detail);
    if (m) return hint(m);
  }
  return "the detail says what holds the change back; keeperctl incarnations get <name> shows an incarnation's status and lock";
}

/** A problem answer as an error: title and detail, each field with its rule, and the exit code of its class. */
export function problemError(r: Response): CliError {
  const p = (typeof r.body === 'object' && r.body !== null ? r.body : {}) as Problem;
  const title = p.title ?? `HTTP ${r.status}`;
  const lines = [
    `${title}: ${p.detail ?? (typeof r.body === 'string' && r.body ? r.body.slice(0, 300) : 'no detail')}`,
  ];
  for (const e of p.errors ?? []) lines.push(`  ${e.path}: ${e.message}`);
  let hint: string | undefined;
  if (r.status === 401)
    hint =
      'the token was not accepted (expired or for another cluster); get a new one with `keeperctl archons token <aid>` from an admin and `keeperctl login` again';
  else if (r.status === 403 && p.missing_permission)
    hint = `your role lacks the permission ${p.missing_permission}; ask a cluster-admin`;
  else if (r.status === 409) hint = conflictHint(p.detail ?? '');
  else if (r.status === 429 || r.status === 503)
    hint = `retry${r.headers['retry-after'] ? ` after ${String(r.headers['retry-after'])} s` : ' shortly'}`;
  return new CliError(exitCodeForStatus(r.status), lines.join('\n'), hint, p);
}
