// The tool table against the route table: every mapped route that exists becomes a tool whose input
// is exactly the route's inputs, and a mapping without a route is reported, never served broken.
import assert from 'node:assert/strict';
import { allRoutes } from '../api/routes';
import { issueTokenBody, listSoulsQuery, sidParams } from '../api/schemas/souls';
import { buildTools, deriveInput, TOOL_TABLE } from './tools';

describe('mcp tools', () => {
  it('maps each tool to one route, and every name is unique', () => {
    const names = TOOL_TABLE.map((t) => t.name);
    assert.equal(new Set(names).size, names.length);
    const { tools, missing } = buildTools(allRoutes);
    assert.deepEqual(
      missing.map((m) => m.name),
      [],
      'every mapped route is in the route table',
    );
    assert.equal(tools.length, TOOL_TABLE.length);
    for (const t of tools) assert.ok(allRoutes.includes(t.route));
  });

  it('derives one argument object from path, query and body; a field in query and body appears once, in the body', () => {
    const issue = allRoutes.find((r) => r.operationId === 'issueBootstrapToken')!;
    const { inputSchema, places } = deriveInput(issue);
    assert.deepEqual(places, { force: 'body', sid: 'params' });
    assert.deepEqual(inputSchema.required, ['sid']);
    assert.equal(inputSchema.properties.sid, sidParams.properties.sid);
    assert.equal(inputSchema.properties.force, issueTokenBody.properties.force);
    assert.equal(inputSchema.additionalProperties, false);
  });

  it('keeps the query rules (defaults, limits) of a list route', () => {
    const list = allRoutes.find((r) => r.operationId === 'listSouls')!;
    const { inputSchema } = deriveInput(list);
    assert.equal(inputSchema.required, undefined, 'every list argument is optional');
    assert.equal(inputSchema.properties.limit, listSoulsQuery.properties.limit);
  });

  it('reports a mapping whose route does not exist instead of serving it', () => {
    const { tools, missing } = buildTools(allRoutes, [{ name: 'nope', method: 'get', path: '/v1/nope' }]);
    assert.deepEqual(tools, []);
    assert.deepEqual(
      missing.map((m) => m.name),
      ['nope'],
    );
  });

  it('tells the model the permission a tool needs', () => {
    const { tools } = buildTools(allRoutes);
    for (const t of tools) assert.ok(t.description.includes(t.route.permission), t.name);
  });
  it('maps the operator lifecycle tools to the archon routes, with their permissions', () => {
    const { tools } = buildTools(allRoutes);
    const perm = (n: string) => tools.find((t) => t.name === n)?.route.permission;
    assert.equal(perm('list-archons'), 'archons:read');
    assert.equal(perm('set-archon-role'), 'archons:update');
    assert.equal(perm('delete-archon'), 'archons:delete');
    assert.equal(perm('revoke-archon-tokens'), 'archons:revoke-tokens');
    const role = tools.find((t) => t.name === 'set-archon-role')!;
    assert.deepEqual(role.places, { role: 'body', aid: 'params' });
    assert.deepEqual(role.inputSchema.required, ['aid', 'role']);
    const revoke = tools.find((t) => t.name === 'revoke-archon-tokens')!;
    assert.deepEqual(revoke.inputSchema.required, ['aid'], 'jti is optional: without it every token is revoked');
  });
});
