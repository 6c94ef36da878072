// Starts an HTTP server on `<host>:<port>` and resolves once it listens (or rejects with the reason,
// e.g. the port is taken), with Node's header and request timeouts tightened for a public listener.
import http from 'node:http';
import type { RequestListener } from 'node:http';
import { splitAddr } from './cache';
import type { Component } from './component';

export function httpComponent(
  name: string,
  addr: string,
  handler: RequestListener,
): Component & { server: http.Server } {
  const server = http.createServer(
    { requestTimeout: 30_000, headersTimeout: 10_000, keepAliveTimeout: 5_000 },
    handler,
  );
  server.maxHeadersCount = 100;
  // Requests Node refuses before any handler runs (headers over 16 KiB, a malformed request line)
  // get a problem body too, not Node's bare status line: the caller learns what to fix.
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) {
      socket.destroy();
      return;
    }
    const tooLarge = err.code === 'HPE_HEADER_OVERFLOW';
    const status = tooLarge ? 431 : 400;
    const body = JSON.stringify({
      type: `urn:keeper:problem:${tooLarge ? 'headers-too-large' : 'malformed-request'}`,
      title: tooLarge ? 'Request Header Fields Too Large' : 'Bad Request',
      status,
      detail: tooLarge
        ? 'the request headers exceed 16 KiB; an operator token is far shorter: check what the Authorization header carries'
        : 'the request could not be parsed as HTTP/1.1',
    });
    socket.end(
      `HTTP/1.1 ${status} ${tooLarge ? 'Request Header Fields Too Large' : 'Bad Request'}\r\nContent-Type: application/problem+json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
  return {
    name,
    server,
    start: () =>
      new Promise<void>((resolve, reject) => {
        const [host, port] = splitAddr(addr);
        const onError = (err: NodeJS.ErrnoException) =>
          reject(new Error(`cannot listen on ${addr} for ${name}: ${err.code ?? err.message}`));
        server.once('error', onError);
        server.listen(port, host, () => {
          server.off('error', onError);
          resolve();
        });
      }),
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        setTimeout(() => {
          server.closeAllConnections();
        }, 2000).unref();
      }),
  };
}
