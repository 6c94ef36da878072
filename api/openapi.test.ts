import assert from 'node:assert/strict';
import { buildOpenApiDocument } from './openapi';
import { allRoutes } from './routes';

describe('api/openapi: the document is generated from the route table', () => {
  const doc = buildOpenApiDocument(allRoutes, { version: '9.9.9' });

  it('is OpenAPI 3.1 with a bearer scheme and every route, its permission and its problems', () => {
    assert.equal(doc.openapi, '3.1.0');
    assert.deepEqual(doc.components.securitySchemes.bearerAuth, {
      ...doc.components.securitySchemes.bearerAuth,
      type: 'http',
      scheme: 'bearer',
    });
    for (const r of allRoutes) {
      const op = doc.paths[r.path]?.[r.method];
      assert.ok(op, `${r.method} ${r.path} is documented`);
      assert.equal(op['x-permission'], r.permission);
      assert.match(op.description, new RegExp(r.permission.replace('*', '\\*')));
      for (const s of ['400', '401', '403'])
        assert.ok(op.responses[s]?.content['application/problem+json'], `${r.path} ${s}`);
    }
  });

  it('uses the validation schemas themselves: patterns and limits appear in the document', () => {
    const body = doc.components.schemas.RegisterSoul;
    assert.ok(body.properties.sid.pattern.includes('[a-z0-9]'));
    const list = doc.paths['/v1/souls'].get.parameters.find((p: { name: string }) => p.name === 'limit');
    assert.equal(list.schema.maximum, 1000);
  });

  it('resolves every $ref to a component', () => {
    const refs = JSON.stringify(doc).match(/"\$ref":"#\/components\/schemas\/[A-Za-z]+"/g) ?? [];
    assert.ok(refs.length > 0);
    for (const ref of refs) {
      const name = ref.split('/').pop()!.replace('"', '');
      assert.ok(doc.components.schemas[name], `${name} exists`);
    }
  });
});
