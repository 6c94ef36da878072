// keeper.service's readiness check (packaging/keeper/wait-ready.js, its ExecStartPost) as systemd
// runs it: the packaged layout (bin/ beside app/dist), the keeper's pid in $MAINPID. It must end as
// soon as the keeper has exited (issue 37 row 1: a keeper that died at start held `systemctl start`
// for the whole 300 s start timeout), and succeed once /readyz answers 200.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import yaml from 'js-yaml';
import { repoRoot } from '../support/repo';

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

describe('keeper.service readiness check (wait-ready.js)', function () {
  // Far below the 290 s the unit gives it: a check that waited for its timeout fails here.
  this.timeout(30_000);
  let dir: string;
  let script: string;

  /** A config whose operator API listens on `port` (the rest as the shipped file has it). */
  const config = (port: number) => {
    const file = path.join(dir, `keeper-${port}.yml`);
    const shipped = yaml.load(
      fs.readFileSync(path.join(repoRoot(), 'packaging', 'keeper', 'keeper.yml'), 'utf8'),
    ) as Record<string, any>;
    shipped.listen.openapi.addr = `127.0.0.1:${port}`;
    fs.writeFileSync(file, yaml.dump(shipped));
    return file;
  };
  const waitReady = (file: string, mainPid: number) =>
    new Promise<Exit>((resolve) => {
      const p = spawn(process.execPath, [script, file, '290'], { env: { ...process.env, MAINPID: String(mainPid) } });
      let stdout = '';
      let stderr = '';
      p.stdout.on('data', (d) => {
        stdout += d;
      });
      p.stderr.on('data', (d) => {
        stderr += d;
      });
      p.on('close', (code) => resolve({ code, stdout, stderr }));
    });
  /** A port nothing listens on. */
  const closedPort = async () => {
    const s = http.createServer().listen(0, '127.0.0.1');
    await new Promise((r) => s.once('listening', r));
    const { port } = s.address() as AddressInfo;
    await new Promise((r) => s.close(r));
    return port;
  };

  before(() => {
    // The package's layout: /usr/lib/keeper/bin/wait-ready.js loads ../app/dist.
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wait-ready-'));
    fs.mkdirSync(path.join(dir, 'bin'));
    fs.mkdirSync(path.join(dir, 'app'));
    fs.symlinkSync(path.join(repoRoot(), 'dist'), path.join(dir, 'app', 'dist'));
    script = path.join(dir, 'bin', 'wait-ready.js');
    fs.copyFileSync(path.join(repoRoot(), 'packaging', 'keeper', 'wait-ready.js'), script);
  });
  after(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('ends with status 1 as soon as the keeper (MAINPID) has exited, saying so and where its reason is', async () => {
    const keeper = spawn(process.execPath, ['-e', 'setTimeout(() => process.exit(1), 500)']);
    const exited = new Promise((r) => keeper.once('exit', r));
    const r = await waitReady(config(await closedPort()), keeper.pid!);
    await exited;
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(
      r.stderr,
      new RegExp(
        `^keeper exited before it was ready \\(pid ${keeper.pid}; its own log says why: journalctl -u keeper\\)`,
      ),
    );
  });

  it('ends with status 0 once /readyz answers 200 while the keeper runs', async () => {
    let asked = 0;
    // 503 first, as a keeper whose database is still connecting answers.
    const server = http
      .createServer((req, res) => {
        asked += 1;
        res.writeHead(req.url === '/readyz' && asked > 2 ? 200 : 503).end('{}');
      })
      .listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    try {
      const { port } = server.address() as AddressInfo;
      const r = await waitReady(config(port), process.pid);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, `keeper ready: http://127.0.0.1:${port}/readyz answered 200\n`);
      assert.ok(asked >= 3, 'it kept asking through the 503s');
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('says which dependencies are degraded when the keeper is ready without them', async () => {
    const server = http
      .createServer((_req, res) => {
        res
          .writeHead(200, { 'Content-Type': 'application/json' })
          .end(JSON.stringify({ status: 'ready', degraded: ['temporal', 'secretstore'] }));
      })
      .listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    try {
      const { port } = server.address() as AddressInfo;
      const r = await waitReady(config(port), process.pid);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(
        r.stdout,
        `keeper ready: http://127.0.0.1:${port}/readyz answered 200 (degraded: temporal, secretstore not answering yet)\n`,
      );
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
