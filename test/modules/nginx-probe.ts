// What the nginx-site tests look at: upstreams for nginx to proxy to, and nginx inside a systemd root
// (who answers on its port, how often systemd reloaded it, its master and worker PIDs). The root
// shares the machine's network, so servers of the test process are reachable from nginx in the root.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import fs from 'node:fs';
import path from 'node:path';
import type { SystemdRoot } from './systemd-root';

/** HTTP servers on 127.0.0.1, each answering every request with `upstream <name>`. */
export async function upstreams(names: string[]): Promise<{ ports: number[]; close(): void }> {
  const servers = await Promise.all(
    names.map(async (name) => {
      const s = http.createServer((_req, res) => {
        res.end(`upstream ${name}\n`);
      });
      await new Promise<void>((res) => s.listen(0, '127.0.0.1', res));
      return s;
    }),
  );
  return {
    ports: servers.map((s) => (s.address() as AddressInfo).port),
    close: () => {
      for (const s of servers) s.close();
    },
  };
}

/** A port free on the machine now, for nginx to listen on. */
export async function freePort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((res) => s.listen(0, '127.0.0.1', res));
  const { port } = s.address() as AddressInfo;
  await new Promise((res) => s.close(res));
  return port;
}

/** Before boot: no stock default site, so the root's nginx never binds the machine's port 80. */
export function withoutDefaultSite(dir: string): void {
  fs.rmSync(path.join(dir, 'etc', 'nginx', 'sites-enabled', 'default'));
}

/** Eight requests to nginx made inside the root: the upstream names that answered, sorted. `node`:
 *  the root's node program (the packaged soul's own when the checkout is not mounted). */
export async function answers(root: SystemdRoot, port: number, node = 'node'): Promise<string[]> {
  const js = `(async () => { const seen = new Set(); for (let i = 0; i < 8; i++) { const r = await fetch('http://127.0.0.1:${port}/');
    if (r.status !== 200) throw new Error('status ' + r.status); seen.add((await r.text()).trim()); } console.log([...seen].sort().join(',')); })()`;
  return (await root.ok([node, '-e', js])).trim().split(',');
}

/** One request to nginx made inside the root: its HTTP status (403 from an access list, say). */
export async function statusOf(root: SystemdRoot, port: number, urlPath: string, node = 'node'): Promise<number> {
  const js = `fetch('http://127.0.0.1:${port}${urlPath}').then((r) => console.log(r.status))`;
  return Number((await root.ok([node, '-e', js])).trim());
}

/** How many times systemd has reloaded nginx in this root (its journal's "Reloaded ..." lines). */
export async function reloads(root: SystemdRoot): Promise<number> {
  return (await root.ok(['journalctl', '-q', '-o', 'cat', '-u', 'nginx.service']))
    .split('\n')
    .filter((l) => /^Reloaded /.test(l)).length;
}

/** nginx's master and workers, once the workers in `notOf` (an earlier configuration's) have exited. */
export async function nginxPids(root: SystemdRoot, notOf: number[] = []): Promise<{ main: number; others: number[] }> {
  let p = await root.pids('nginx');
  for (let i = 0; i < 100 && p.others.some((w) => notOf.includes(w)); i++) {
    await new Promise((res) => setTimeout(res, 100));
    p = await root.pids('nginx');
  }
  return p;
}

/** The steps examples/nginx-site's destroy changes on a host where the site was created, in order. */
export const DESTROY_CHANGES = [
  'nginx stopped',
  'site disabled',
  'site config removed',
  'site checker removed',
  'db env removed',
  'log rotation removed',
  'logs removed',
  'web root removed',
  'site user removed',
];

/** After destroy: nginx inactive, every file and folder of the site gone, and its user. */
export async function assertSiteGone(root: SystemdRoot): Promise<void> {
  assert.equal((await root.run(['systemctl', 'is-active', 'nginx'])).stdout.trim(), 'inactive');
  for (const p of [
    '/etc/nginx/sites-enabled/app',
    '/etc/nginx/sites-available/app',
    '/usr/local/lib/nginx-site',
    '/etc/nginx-site/app',
    '/etc/logrotate.d/nginx-site-app',
    '/var/log/nginx-site/app',
    '/srv/app',
  ]) {
    assert.equal(fs.lstatSync(root.path(p), { throwIfNoEntry: false }), undefined, `${p} is gone`);
  }
  assert.equal((await root.run(['getent', 'passwd', 'nginx-site'])).code, 2);
}
