// Operators: create, list, get, role change, removal, token issue/reissue and revocation (ARCHITECTURE 3). Tokens carry
// the AID as `sub`; the role and the revocation moment are read from the registry on every request,
// so the token's `role` claim is only informational and a revocation holds at every keeper at once.
import { AID_PATTERN, permissionsOf } from '../roles';
import { issueOperatorToken, tokenIssueTime } from '../jwt';
import {
  createArchon,
  deleteArchon,
  getArchon,
  listArchons,
  revokeArchonToken,
  revokeArchonTokens,
  setArchonRole,
  type ArchonRecord,
} from '../../db/repos/archons';
import { decodeCursor, pageBody } from '../pagination';
import { problems } from '../problems';
import { defineRoute } from '../route';
import { pageQuerySchema, problemSchema } from '../schemas/common';
import {
  aidParams,
  archonListSchema,
  archonSchema,
  createArchonBody,
  operatorTokenSchema,
  revokeTokensBody,
  updateArchonBody,
  type CreateArchonInput,
  type RevokeTokensInput,
  type UpdateArchonInput,
} from '../schemas/archons';

const lastAdmin = {
  description: 'the operator is the last cluster-admin (the detail names the rule)',
  schema: problemSchema,
  contentType: 'application/problem+json',
};

function view(a: ArchonRecord) {
  return {
    aid: a.aid,
    role: a.role,
    permissions: [...permissionsOf(a.role)],
    created_by: a.created_by,
    created_at: a.created_at.toISOString(),
    tokens_valid_after: a.tokens_valid_after ? a.tokens_valid_after.toISOString() : null,
  };
}

export const archonRoutes = [
  defineRoute<Record<string, never>, Record<string, never>, CreateArchonInput>({
    method: 'post',
    path: '/v1/archons',
    operationId: 'createArchon',
    tag: 'Operators',
    permission: 'archons:create',
    summary: 'Create an operator',
    description: 'Adds an operator with a built-in role. Issue its first token with POST /v1/archons/{aid}/tokens.',
    body: { schema: createArchonBody, required: true },
    responses: { 201: { description: 'the operator was created', schema: archonSchema } },
    async handler({ body, caller, deps }) {
      const archon = await createArchon(deps.runtime.db, { aid: body.aid, role: body.role, createdBy: caller.aid });
      return {
        status: 201,
        body: view(archon),
        headers: { Location: `/v1/archons/${encodeURIComponent(archon.aid)}` },
      };
    },
  }),
  defineRoute<Record<string, never>, { limit: number; cursor?: string }>({
    method: 'get',
    path: '/v1/archons',
    operationId: 'listArchons',
    tag: 'Operators',
    permission: 'archons:read',
    summary: 'List operators',
    query: pageQuerySchema,
    responses: { 200: { description: 'operators ordered by AID', schema: archonListSchema } },
    async handler({ query, deps }) {
      const after = decodeCursor(query.cursor, AID_PATTERN);
      return { status: 200, body: pageBody(await listArchons(deps.runtime.db, { limit: query.limit, after }), view) };
    },
  }),
  defineRoute<{ aid: string }>({
    method: 'get',
    path: '/v1/archons/{aid}',
    operationId: 'getArchon',
    tag: 'Operators',
    permission: 'archons:read',
    summary: 'Get an operator',
    params: aidParams,
    responses: { 200: { description: 'the operator', schema: archonSchema } },
    async handler({ params, deps }) {
      const archon = await getArchon(deps.runtime.db, params.aid);
      if (!archon) throw problems.notFound(`operator ${params.aid} does not exist`);
      return { status: 200, body: view(archon) };
    },
  }),
  defineRoute<{ aid: string }, Record<string, never>, UpdateArchonInput>({
    method: 'patch',
    path: '/v1/archons/{aid}',
    operationId: 'updateArchon',
    tag: 'Operators',
    permission: 'archons:update',
    summary: "Change an operator's role",
    description:
      "The new role holds from the operator's next request, at every keeper, whatever its tokens say (the role is read from the registry). " +
      'Demoting the last cluster-admin is refused (409).',
    params: aidParams,
    body: { schema: updateArchonBody, required: true },
    responses: { 200: { description: 'the operator with its new role', schema: archonSchema }, 409: lastAdmin },
    async handler({ params, body, deps }) {
      return { status: 200, body: view(await setArchonRole(deps.runtime.db, params.aid, body.role)) };
    },
  }),
  defineRoute<{ aid: string }>({
    method: 'delete',
    path: '/v1/archons/{aid}',
    operationId: 'deleteArchon',
    tag: 'Operators',
    permission: 'archons:delete',
    summary: 'Remove an operator',
    description:
      'Its tokens are refused (401) from its next request on, at every keeper. What it did stays attributed to its AID (created_by, published_by). ' +
      'Removing the last cluster-admin is refused (409); an operator may remove itself otherwise.',
    params: aidParams,
    responses: { 204: { description: 'removed' }, 409: lastAdmin },
    async handler({ params, deps }) {
      await deleteArchon(deps.runtime.db, params.aid);
      return { status: 204, body: undefined };
    },
  }),
  defineRoute<{ aid: string }>({
    method: 'post',
    path: '/v1/archons/{aid}/tokens',
    operationId: 'issueArchonToken',
    tag: 'Operators',
    permission: 'archons:issue-token',
    summary: "Issue (or reissue) an operator's token",
    description:
      'Signs a new JWT for the operator, valid for `auth.jwt.ttl_default`. Earlier tokens stay valid until they expire or are revoked ' +
      '(POST /v1/archons/{aid}/revoke-tokens). A token issued in the second of a revocation is dated to the next second, so it is never caught by it.',
    params: aidParams,
    responses: { 201: { description: 'the new token, shown once', schema: operatorTokenSchema } },
    async handler({ params, deps }) {
      const archon = await getArchon(deps.runtime.db, params.aid);
      if (!archon) throw problems.notFound(`operator ${params.aid} does not exist`);
      const { config, signingKey } = deps.runtime;
      const { token, expiresAt } = await issueOperatorToken(
        signingKey,
        config.auth.jwt.issuer,
        archon.aid,
        archon.role,
        config.auth.jwt.ttl_default_ms,
        tokenIssueTime(archon.tokens_valid_after),
      );
      return {
        status: 201,
        body: { aid: archon.aid, role: archon.role, token, token_type: 'Bearer', expires_at: expiresAt.toISOString() },
      };
    },
  }),
  defineRoute<{ aid: string }, Record<string, never>, RevokeTokensInput | undefined>({
    method: 'post',
    path: '/v1/archons/{aid}/revoke-tokens',
    operationId: 'revokeArchonTokens',
    tag: 'Operators',
    permission: 'archons:revoke-tokens',
    summary: "Revoke an operator's tokens, or one of them",
    description:
      'Every token of the operator issued before now is refused (401) from the next request on, by every keeper of the cluster: ' +
      'each request reads the operator\'s revocation moment with its role. With `{"jti"}` only that token is refused, likewise ' +
      '(the activity stream names the jti of every call). The operator stays; issue a fresh token with POST /v1/archons/{aid}/tokens. ' +
      'Revoking your own tokens ends your session too.',
    params: aidParams,
    body: { schema: revokeTokensBody, required: false },
    responses: {
      200: {
        description: 'the operator: tokens_valid_after set to now, or unchanged when one token was revoked by its jti',
        schema: archonSchema,
      },
    },
    async handler({ params, body, deps }) {
      if (body?.jti !== undefined) {
        // Kept until the longest-lived token this keeper issues would have expired; refused for its age after.
        const { ttl_default_ms, ttl_bootstrap_ms } = deps.runtime.config.auth.jwt;
        const keepUntil = new Date(Date.now() + Math.max(ttl_default_ms, ttl_bootstrap_ms));
        const one = await revokeArchonToken(deps.runtime.db, params.aid, body.jti, keepUntil);
        if (!one) throw problems.notFound(`operator ${params.aid} does not exist`);
        return { status: 200, body: view(one) };
      }
      const archon = await revokeArchonTokens(deps.runtime.db, params.aid);
      if (!archon) throw problems.notFound(`operator ${params.aid} does not exist`);
      return { status: 200, body: view(archon) };
    },
  }),
];
