// Souls: register (with the first bootstrap token), list, get, and bootstrap token reissue.
// Bootstrap tokens appear in a response body exactly once and are never logged.
import {
  countSoulsByStatus,
  deleteSoul,
  getSouls,
  listSouls,
  registerSoul,
  revokeSoul,
  type SoulRecord,
} from '../../db/repos/souls';
import { registerSshHost, soulCheckSchema } from './souls-ssh';
import { publishRevoked } from '../../hub/revocations';
import { refreshFacts } from '../../hub/facts-refresh';
import { issueBootstrapToken } from '../../db/repos/bootstrap-tokens';
import type { Knex } from 'knex';
import type { Cache } from '../../platform/cache';
import { TickBatcher } from '../batch';
import { QueryError, factAt, factsAt, selectSouls } from '../../runs/index';
import { decodeCursor, pageBody } from '../pagination';
import { problems } from '../problems';
import { defineRoute } from '../route';
import { FQDN_PATTERN } from '../schemas/common';
import {
  issueTokenBody,
  issueTokenQuery,
  issuedTokenSchema,
  listSoulsQuery,
  registerSoulBody,
  registeredSoulSchema,
  sidParams,
  soulListSchema,
  soulSchema,
  type ListSoulsQuery,
  type RegisterSoulInput,
} from '../schemas/souls';

const SID_KEY = new RegExp(FQDN_PATTERN);

// GET /v1/souls/{sid} of concurrent requests in one statement (see api/batch.ts), one batcher per database.
const soulReaders = new WeakMap<Knex, TickBatcher<string, SoulRecord>>();
function readSoul(db: Knex, sid: string): Promise<SoulRecord | undefined> {
  let r = soulReaders.get(db);
  if (!r) soulReaders.set(db, (r = new TickBatcher((sids) => getSouls(db, sids))));
  return r.get(sid);
}

export function soulView(s: SoulRecord) {
  const iso = (d: Date | null) => (d === null ? null : d.toISOString());
  return {
    sid: s.sid,
    transport: s.transport,
    covens: s.covens,
    status: s.status,
    connected_kid: s.connected_kid,
    soulprint: s.soulprint,
    last_seen_at: iso(s.last_seen_at),
    onboarded_at: iso(s.onboarded_at),
    cert_not_after: iso(s.cert_not_after),
    revoked_at: iso(s.revoked_at),
    created_at: s.created_at.toISOString(),
    updated_at: s.updated_at.toISOString(),
    bootstrap_token_expires_at: iso(s.bootstrap_token_expires_at),
    // The block as registered: address, user, pinned key, the key's reference; never key material.
    ssh:
      s.ssh === null
        ? null
        : {
            address: s.ssh.address,
            port: s.ssh.port,
            user: s.ssh.user,
            host_key: s.ssh.host_key,
            credential_ref: s.ssh.credential_ref,
            sudo: s.ssh.sudo,
            trust_on_first_use: s.ssh.trust_on_first_use,
          },
    last_contact_at: iso(s.last_contact_at),
    last_error: s.last_error,
  };
}

/** How long `refresh=true` waits for the souls' fresh facts before answering with what it has. */
const REFRESH_WAIT_MS = 5000;
const UNANSWERED_LISTED = 100;

/**
 * `refresh=true`: asks the connected agent souls the other filters select for their facts now (the
 * `where` is evaluated afterwards, on the fresh facts, so a host whose facts just changed is found).
 * SSH souls are not contacted: their facts are those of their last SSH contact.
 */
async function refreshSelection(deps: { db: Knex; cache: Cache }, query: ListSoulsQuery) {
  const souls = await selectSouls(deps.db, {
    covens: query.coven ? [query.coven] : undefined,
    status: query.status,
    sid: query.sid,
  });
  const asked = souls.filter((s) => s.transport === 'agent' && s.status === 'connected').map((s) => s.sid);
  const answered = await refreshFacts(deps.cache, asked, REFRESH_WAIT_MS);
  const unanswered = asked.filter((sid) => !answered.has(sid));
  return { asked: asked.length, answered: answered.size, unanswered: unanswered.slice(0, UNANSWERED_LISTED) };
}

/** `where`, `fields`, `count_by` (docs/executions.md "Fact queries"): read from the stored soulprints only. */
async function factQuery(db: Knex, query: ListSoulsQuery, after: string | undefined) {
  let matches: SoulRecord[];
  try {
    matches = await selectSouls(db, {
      covens: query.coven ? [query.coven] : undefined,
      status: query.status,
      sid: query.sid,
      where: query.where,
    });
  } catch (e) {
    if (e instanceof QueryError)
      throw problems.invalid(`where: ${e.message}`, [{ path: '/query/where', message: e.message }]);
    throw e;
  }
  const fields = query.fields?.split(',');
  const now = Date.now();
  const view = (s: SoulRecord) => {
    const at = factsAt(s);
    return {
      ...soulView(s),
      soulprint_age_s: at === null ? null : Math.max(0, Math.round((now - at.getTime()) / 1000)),
      ...(fields ? { facts: Object.fromEntries(fields.map((f) => [f, factAt(s, f) ?? null])) } : {}),
    };
  };
  const rest = after === undefined ? matches : matches.filter((s) => s.sid > after);
  const page = {
    items: rest.slice(0, query.limit),
    ...(rest.length > query.limit ? { next: rest[query.limit - 1].sid } : {}),
  };
  let countBy: { field: string; total: number; values: { value: unknown; count: number }[] } | undefined;
  if (query.count_by !== undefined) {
    const by = new Map<string, number>();
    for (const s of matches) {
      const key = JSON.stringify(factAt(s, query.count_by) ?? null);
      by.set(key, (by.get(key) ?? 0) + 1);
    }
    const values = [...by]
      .map(([k, count]) => ({ value: JSON.parse(k) as unknown, count }))
      .sort((a, b) => b.count - a.count || JSON.stringify(a.value).localeCompare(JSON.stringify(b.value)));
    countBy = { field: query.count_by, total: matches.length, values };
  }
  return { ...pageBody(page, view), ...(countBy ? { count_by: countBy } : {}) };
}

export const soulRoutes = [
  defineRoute<Record<string, never>, Record<string, never>, RegisterSoulInput>({
    method: 'post',
    path: '/v1/souls',
    operationId: 'registerSoul',
    tag: 'Souls',
    permission: 'souls:create',
    summary: 'Register a host',
    description:
      'Creates the soul with status `pending`. Transport `agent`: returns its bootstrap token once; run `soul init --token=<token>` ' +
      'on the host within the TTL (24h by default). Transport `ssh` (push mode, docs/ssh.md): needs the `ssh` block (address, user, pinned ' +
      'host key, `credential_ref` of the private key in the secrets store); no token is created.',
    body: { schema: registerSoulBody, required: true },
    responses: {
      201: {
        description: 'registered; for transport agent the bootstrap token is in the body, shown once',
        schema: registeredSoulSchema,
      },
    },
    async handler({ body, deps }) {
      if (body.transport === 'ssh') {
        const soul = await registerSshHost(deps.runtime.db, body, deps.runtime.config.secretstore.scenario_prefix);
        return { status: 201, body: soulView(soul), headers: { Location: `/v1/souls/${soul.sid}` } };
      }
      if (body.ssh !== undefined)
        throw problems.invalid('the ssh block is for transport ssh', [
          { path: '/body/ssh', message: 'only with transport ssh' },
        ]);
      const { soul, token, expiresAt } = await registerSoul(deps.runtime.db, body, {
        tokenTtlMs: deps.runtime.config.auth.bootstrap_token_ttl_ms,
      });
      return {
        status: 201,
        body: { ...soulView(soul), bootstrap_token: token, bootstrap_token_expires_at: expiresAt.toISOString() },
        headers: { Location: `/v1/souls/${soul.sid}` },
      };
    },
  }),
  defineRoute<Record<string, never>, ListSoulsQuery>({
    method: 'get',
    path: '/v1/souls',
    operationId: 'listSouls',
    tag: 'Souls',
    permission: 'souls:read',
    summary: 'List souls',
    description:
      'Souls ordered by SID, with their registry status; filter by coven, status and a part of the SID; `counts=true` adds the number of souls per status. ' +
      'Fact queries: `where` (CEL over `soulprint.self`), `fields` and `count_by` are answered from the stored soulprints with their age; no host is contacted.',
    query: listSoulsQuery,
    responses: { 200: { description: 'a page of souls', schema: soulListSchema } },
    async handler({ query, deps }) {
      const after = decodeCursor(query.cursor, SID_KEY);
      if (query.refresh) {
        const refresh = await refreshSelection(deps.runtime, query);
        return { status: 200, body: { ...(await factQuery(deps.runtime.db, query, after)), refresh } };
      }
      if (query.where !== undefined || query.fields !== undefined || query.count_by !== undefined)
        return { status: 200, body: await factQuery(deps.runtime.db, query, after) };
      const filter = { coven: query.coven, sid: query.sid };
      const [page, counts] = await Promise.all([
        listSouls(deps.runtime.db, { ...filter, status: query.status }, { limit: query.limit, after }),
        query.counts ? countSoulsByStatus(deps.runtime.db, filter) : undefined,
      ]);
      return { status: 200, body: { ...pageBody(page, soulView), ...(counts ? { counts } : {}) } };
    },
  }),
  defineRoute<{ sid: string }>({
    method: 'get',
    path: '/v1/souls/{sid}',
    operationId: 'getSoul',
    tag: 'Souls',
    permission: 'souls:read',
    summary: 'Get a soul',
    params: sidParams,
    responses: { 200: { description: 'the soul, including its status', schema: soulSchema } },
    async handler({ params, deps }) {
      const soul = await readSoul(deps.runtime.db, params.sid);
      if (!soul) throw problems.notFound(`soul ${params.sid} is not registered`);
      return { status: 200, body: soulView(soul) };
    },
  }),
  defineRoute<{ sid: string }>({
    method: 'post',
    path: '/v1/souls/{sid}/revoke',
    operationId: 'revokeSoul',
    tag: 'Souls',
    permission: 'souls:revoke',
    summary: 'Revoke a soul',
    description:
      'Cuts a host off at once: its stream is closed on whichever keeper holds it (within about a second), its certificate is ' +
      'refused from then on, unused bootstrap tokens are retired, and its status is `revoked`. To bring it back, issue a token with `force` ' +
      'and run `soul init` on the host: the old certificate stays refused.',
    params: sidParams,
    responses: { 200: { description: 'the revoked soul', schema: soulSchema } },
    async handler({ params, deps }) {
      const soul = await revokeSoul(deps.runtime.db, params.sid);
      if (!soul) throw problems.notFound(`soul ${params.sid} is not registered`);
      await publishRevoked(deps.runtime.cache, params.sid);
      return { status: 200, body: soulView(soul) };
    },
  }),
  defineRoute<{ sid: string }>({
    method: 'delete',
    path: '/v1/souls/{sid}',
    operationId: 'deleteSoul',
    tag: 'Souls',
    permission: 'souls:delete',
    summary: 'Remove a soul',
    description:
      'Removes the host from the registry with its bootstrap tokens; its stream is closed on whichever keeper holds it and its ' +
      'certificate is refused as unregistered. Registering the SID again starts over with a new token.',
    params: sidParams,
    responses: { 204: { description: 'removed' } },
    async handler({ params, deps }) {
      if (!(await deleteSoul(deps.runtime.db, params.sid)))
        throw problems.notFound(`soul ${params.sid} is not registered`);
      await publishRevoked(deps.runtime.cache, params.sid);
      return { status: 204, body: undefined };
    },
  }),
  defineRoute<{ sid: string }, { force: boolean }, { force: boolean } | undefined>({
    method: 'post',
    path: '/v1/souls/{sid}/issue-token',
    operationId: 'issueBootstrapToken',
    tag: 'Souls',
    permission: 'souls:issue-token',
    summary: 'Reissue a bootstrap token',
    description:
      'Issues a new bootstrap token for a registered host. While an unused, unexpired token exists the answer is 409, ' +
      'unless `force` is true (as `?force=true` or the body `{"force": true}`): then the old token is marked used and a new one issued. ' +
      'A soul with transport `ssh` has no token: 409, with or without force.',
    params: sidParams,
    query: issueTokenQuery,
    body: { schema: issueTokenBody, required: false },
    responses: { 201: { description: 'the new token, shown once', schema: issuedTokenSchema } },
    async handler({ params, query, body, deps }) {
      const force = query.force || body?.force === true;
      const { token, expiresAt } = await issueBootstrapToken(deps.runtime.db, params.sid, {
        force,
        ttlMs: deps.runtime.config.auth.bootstrap_token_ttl_ms,
      });
      return {
        status: 201,
        body: { sid: params.sid, bootstrap_token: token, bootstrap_token_expires_at: expiresAt.toISOString() },
      };
    },
  }),
  defineRoute<{ sid: string }>({
    method: 'post',
    path: '/v1/souls/{sid}/check',
    operationId: 'checkSoul',
    tag: 'Souls',
    permission: 'souls:check',
    summary: 'Check an SSH host',
    description:
      "Transport `ssh`: connects now, verifies the pinned host key and that the host's FQDN is the SID, and reads its facts " +
      '(stored as the soulprint the next render sees). The outcome is recorded as `last_contact_at` or `last_error`. 409 for an agent soul.',
    params: sidParams,
    responses: {
      200: {
        description: 'the outcome; `reachable` false with the reason when the host could not be used',
        schema: soulCheckSchema,
      },
    },
    async handler({ params, deps }) {
      const soul = await readSoul(deps.runtime.db, params.sid);
      if (!soul) throw problems.notFound(`soul ${params.sid} is not registered`);
      if (soul.transport !== 'ssh')
        throw problems.conflict(
          `soul ${params.sid} uses transport ${soul.transport}: its presence is its stream; check is for transport ssh`,
        );
      if (!deps.ssh) throw problems.unavailable('this keeper has no SSH transport configured');
      const r = await deps.ssh.check(params.sid);
      return { status: 200, body: { sid: params.sid, ...r } };
    },
  }),
];
