import assert from 'node:assert/strict';
import express from 'express';
import { RouteTableError, canonicalPath, checkRouteTable, mountRoutes, toExpressPath } from './mount';
import { allRoutes } from './routes';
import type { RouteDef } from './route';
import type { ApiDeps } from './deps';

const base: RouteDef = {
  method: 'get',
  path: '/v1/things/{id}',
  operationId: 'getThing',
  tag: 'Things',
  permission: 'things:read',
  summary: 'x',
  params: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'], additionalProperties: false },
  responses: { 200: { description: 'ok' } },
  handler: async () => ({ status: 200, body: {} }),
};

describe('api/mount: the route table is checked before anything is served', () => {
  it('accepts the real route table', () => {
    assert.doesNotThrow(() => checkRouteTable(allRoutes));
  });

  it('refuses a route without a permission, so the keeper does not start', () => {
    const unguarded = { ...base, permission: undefined } as unknown as RouteDef;
    assert.throws(
      () => checkRouteTable([unguarded]),
      (e: unknown) => e instanceof RouteTableError && /declares no permission/.test(e.message),
    );
    assert.throws(() => mountRoutes(express.Router(), [{ ...base, permission: '' }], {} as ApiDeps), RouteTableError);
  });

  it('refuses permissions outside the grammar, duplicates, and paths whose parameters are undeclared', () => {
    assert.throws(() => checkRouteTable([{ ...base, permission: 'things' }]), RouteTableError);
    assert.throws(() => checkRouteTable([{ ...base, permission: 'Things:Read' }]), RouteTableError);
    assert.throws(() => checkRouteTable([base, { ...base }]), /declared twice/);
    assert.throws(() => checkRouteTable([{ ...base, params: undefined }]), /path parameters/);
    assert.throws(() => checkRouteTable([{ ...base, path: '/things/{id}' }]), /under \/v1/);
  });

  it('converts OpenAPI paths to express paths', () => {
    assert.equal(toExpressPath('/v1/souls/{sid}/issue-token'), '/v1/souls/:sid/issue-token');
  });
});

describe('api/mount: the canonical path of a call (the activity stream target, issue 45)', () => {
  it('is the route template with the names the router decoded', () => {
    assert.equal(canonicalPath('/v1/archons/{aid}/tokens', { aid: 'uma x' }), '/v1/archons/uma x/tokens');
    assert.equal(canonicalPath('/v1/souls', {}), '/v1/souls');
    assert.equal(canonicalPath('/v1/things/{id}', {}), '/v1/things/{id}', 'a name the call lacks stays a name');
  });
});
