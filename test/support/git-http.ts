// A private git repository over HTTP for tests: `git http-backend` (git's own CGI server side)
// behind a small Node HTTP server on 127.0.0.1 that demands HTTP basic auth. Counts the requests
// it authorized and refused, so a test can tell that the credential was really used.
import { spawn } from 'node:child_process';
import { timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface GitHttpServer {
  /** http://127.0.0.1:<port>/ : repositories are <url><name>.git under `root`. */
  url: string;
  stats: { authorized: number; refused: number };
  close(): Promise<void>;
}

function authorized(header: string | undefined, user: string, password: string): boolean {
  const m = /^Basic (\S+)$/.exec(header ?? '');
  if (!m) return false;
  const got = Buffer.from(Buffer.from(m[1], 'base64').toString());
  const want = Buffer.from(`${user}:${password}`);
  return got.length === want.length && timingSafeEqual(got, want);
}

export async function startGitHttpServer(root: string, user: string, password: string): Promise<GitHttpServer> {
  const stats = { authorized: 0, refused: 0 };
  const server = http.createServer((req, res) => {
    if (!authorized(req.headers.authorization, user, password)) {
      stats.refused++;
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="test"' }).end();
      return;
    }
    stats.authorized++;
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const cgi = spawn('git', ['http-backend'], {
      env: {
        PATH: process.env.PATH,
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: '1',
        REMOTE_USER: user,
        REQUEST_METHOD: req.method ?? 'GET',
        PATH_INFO: decodeURIComponent(url.pathname),
        QUERY_STRING: url.search.slice(1),
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        ...(req.headers['content-encoding'] ? { HTTP_CONTENT_ENCODING: req.headers['content-encoding'] } : {}),
        ...(req.headers['git-protocol'] ? { GIT_PROTOCOL: String(req.headers['git-protocol']) } : {}),
      },
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    req.pipe(cgi.stdin);
    // CGI output: header lines, a blank line, then the body.
    let head = Buffer.alloc(0);
    let headersDone = false;
    cgi.stdout.on('data', (d: Buffer) => {
      if (headersDone) {
        res.write(d);
        return;
      }
      head = Buffer.concat([head, d]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      headersDone = true;
      let status = 200;
      for (const line of head.subarray(0, end).toString().split('\r\n')) {
        const i = line.indexOf(':');
        const name = line.slice(0, i).trim();
        const value = line.slice(i + 1).trim();
        if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10);
        else res.setHeader(name, value);
      }
      res.writeHead(status);
      res.write(head.subarray(end + 4));
    });
    cgi.on('close', () => res.end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    stats,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
