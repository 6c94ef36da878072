// The /ui router on its own: any client route gets the app shell (so a reload of
// /ui/incarnations/web works), assets are cached for good, the shell never, and a keeper whose UI
// was not built says so as a problem instead of a blank page.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import express from 'express';
import { createApiFallback } from '../../api';
import { silentLogger } from '../../common/logger';
import { createUiRouter } from '.';

async function serve(dir: string): Promise<{ url: string; close(): Promise<void> }> {
  const app = express();
  app.use('/ui', createUiRouter({ dir }));
  app.use(createApiFallback(silentLogger));
  const server = http.createServer(app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((r) => server.close(() => r())) };
}

describe('ui/server', () => {
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keeper-ui-'));
    fs.mkdirSync(path.join(dir, 'assets'));
    fs.writeFileSync(path.join(dir, 'index.html'), '<!doctype html><div id="app"></div>');
    fs.writeFileSync(path.join(dir, 'assets', 'index-abc.js'), 'console.log(1)');
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('answers /ui and every client route with the app shell, uncached, under a same-origin CSP', async () => {
    const s = await serve(dir);
    try {
      for (const p of ['/ui', '/ui/', '/ui/souls', '/ui/incarnations/web-prod']) {
        const res = await fetch(s.url + p);
        assert.equal(res.status, 200, p);
        assert.match(await res.text(), /<div id="app">/);
        assert.equal(res.headers.get('cache-control'), 'no-store');
        assert.match(res.headers.get('content-security-policy') ?? '', /default-src 'self'.*connect-src 'self'/);
        assert.equal(res.headers.get('referrer-policy'), 'no-referrer');
      }
    } finally {
      await s.close();
    }
  });

  it('serves hashed assets as immutable and a missing one as 404, never the shell', async () => {
    const s = await serve(dir);
    try {
      const js = await fetch(`${s.url}/ui/assets/index-abc.js`);
      assert.equal(js.status, 200);
      assert.match(js.headers.get('content-type') ?? '', /javascript/);
      assert.match(js.headers.get('cache-control') ?? '', /immutable/);
      const missing = await fetch(`${s.url}/ui/assets/gone.js`);
      assert.equal(missing.status, 404);
      assert.match(missing.headers.get('content-type') ?? '', /problem\+json/);
    } finally {
      await s.close();
    }
  });

  it('answers 503 with a problem naming the fix when the UI was not built', async () => {
    const s = await serve(path.join(dir, 'nothing-here'));
    try {
      const res = await fetch(`${s.url}/ui/souls`);
      assert.equal(res.status, 503);
      assert.match(res.headers.get('content-type') ?? '', /problem\+json/);
      assert.match((await res.json()).detail, /make build/);
    } finally {
      await s.close();
    }
  });

  it('sends assets and the shell compressed as the client accepts (Brotli, gzip, or as is), nothing outside the assets', async () => {
    const big = `export const table = ${JSON.stringify(Array.from({ length: 2000 }, (_, i) => `row ${i}`))};\n`;
    fs.writeFileSync(path.join(dir, 'assets', 'big-abc.js'), big);
    const s = await serve(dir);
    try {
      const get = (p: string, enc: string) =>
        new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
          http
            .get(s.url + p, { headers: { 'Accept-Encoding': enc } }, (res) => {
              const chunks: Buffer[] = [];
              res.on('data', (c: Buffer) => chunks.push(c));
              res.on('end', () =>
                resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }),
              );
            })
            .on('error', reject);
        });
      const br = await get('/ui/assets/big-abc.js', 'gzip, deflate, br');
      assert.equal(br.headers['content-encoding'], 'br');
      assert.equal(zlib.brotliDecompressSync(br.body).toString(), big);
      assert.ok(br.body.length < big.length / 4, `${br.body.length} of ${big.length} bytes`);
      assert.match(br.headers.vary ?? '', /Accept-Encoding/);
      assert.match(br.headers['cache-control'] ?? '', /immutable/);
      const gz = await get('/ui/assets/big-abc.js', 'gzip;q=1, br;q=0');
      assert.equal(gz.headers['content-encoding'], 'gzip');
      assert.equal(zlib.gunzipSync(gz.body).toString(), big);
      const plain = await get('/ui/assets/big-abc.js', 'identity');
      assert.equal(plain.headers['content-encoding'], undefined);
      assert.equal(plain.body.toString(), big);
      // A body too small to gain is sent as is.
      assert.equal((await get('/ui/assets/index-abc.js', 'br')).headers['content-encoding'], undefined);
      // Nothing outside the assets folder is ever sent, however the path is spelled: a file beside the
      // UI's folder stays unread (the router answers 404, or the app shell for a path it normalised).
      const outside = path.join(path.dirname(dir), `${path.basename(dir)}-outside.txt`);
      fs.writeFileSync(outside, 'outside the ui folder');
      const name = path.basename(outside);
      try {
        for (const p of [
          `/ui/assets/../../${name}`,
          `/ui/assets/%2e%2e/%2e%2e/${name}`,
          `/ui/assets/..%2f..%2f${name}`,
        ]) {
          const res = await get(p, 'identity');
          assert.ok(!res.body.toString().includes('outside the ui folder'), p);
          assert.ok(res.status === 404 || /<div id="app">/.test(res.body.toString()), `${p}: ${res.status}`);
        }
      } finally {
        fs.rmSync(outside, { force: true });
      }
    } finally {
      await s.close();
    }
  });
});
