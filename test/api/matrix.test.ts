// The route x role matrix (issue 3, "Checked by"): for every route in the route table and every
// built-in role, the answer agrees with the declared permission. A route added to `allRoutes` is
// covered here automatically, so no route can be added unguarded.
import assert from 'node:assert/strict';
import { allRoutes } from '../../api/routes';
import { ROLE_NAMES, permissionsOf, permits } from '../../api/roles';
import { startTestKeeper, type TestKeeper } from '../support/keeper';
import { assertProblem, call, operatorToken } from './helpers';

/** A request for the route with placeholder parameters; the body may well be invalid (that is a 400, not a 403). */
function requestFor(path: string): string {
  return path.replace(/\{([A-Za-z_]+)\}/g, (_m, name: string) =>
    name === 'sid' ? 'matrix.example.com' : `matrix-${name}`,
  );
}

describe('Operator API: route x role matrix', function () {
  let tk: TestKeeper;
  const tokens: Record<string, string> = {};

  before(async () => {
    tk = await startTestKeeper();
    for (const role of ROLE_NAMES) tokens[role] = await operatorToken(tk, `matrix-${role}`, role);
  });
  after(async () => {
    await tk?.stop();
  });

  it('covers at least the routes of issue 3', () => {
    const names = allRoutes.map((r) => `${r.method.toUpperCase()} ${r.path}`);
    for (const n of [
      'POST /v1/souls',
      'GET /v1/souls',
      'GET /v1/souls/{sid}',
      'POST /v1/souls/{sid}/issue-token',
      'POST /v1/services',
      'GET /v1/services',
      'GET /v1/services/{name}',
      'POST /v1/archons',
      'GET /v1/archons',
      'GET /v1/archons/{aid}',
      'POST /v1/archons/{aid}/tokens',
    ]) {
      assert.ok(names.includes(n), n);
    }
  });

  it('answers every route with 403 naming the permission exactly when the role lacks it, and never 401/403 otherwise', async () => {
    const checked: string[] = [];
    for (const route of allRoutes) {
      for (const role of ROLE_NAMES) {
        const body = route.method === 'get' ? undefined : {};
        const a = await call(tk.baseUrl, route.method.toUpperCase(), requestFor(route.path), {
          token: tokens[role],
          body,
        });
        const allowed = permits(permissionsOf(role), route.permission);
        const what = `${role} ${route.method.toUpperCase()} ${route.path} -> ${a.status} ${a.text.slice(0, 200)}`;
        if (allowed) {
          assert.ok(a.status !== 401 && a.status !== 403 && a.status < 500, what);
        } else {
          assertProblem(a, 403);
          assert.equal(a.body.missing_permission, route.permission, what);
          assert.match(a.body.detail, new RegExp(`role ${role}`), what);
        }
        checked.push(what);
      }
    }
    assert.equal(checked.length, allRoutes.length * ROLE_NAMES.length);
  });

  it('answers every route with 401 without a token and with a forged one', async () => {
    for (const route of allRoutes) {
      for (const token of [null, `${tokens.viewer}x`]) {
        const a = await call(tk.baseUrl, route.method.toUpperCase(), requestFor(route.path), {
          token,
          body: route.method === 'get' ? undefined : {},
        });
        assertProblem(a, 401);
      }
    }
  });

  it('gives cluster-admin every permission and viewer no write permission', () => {
    for (const route of allRoutes) {
      assert.ok(permits(permissionsOf('cluster-admin'), route.permission));
      if (route.method !== 'get') assert.equal(permits(permissionsOf('viewer'), route.permission), false, route.path);
    }
  });
});
