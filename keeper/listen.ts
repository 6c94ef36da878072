// Starts an HTTP server on `<host>:<port>` and resolves once it listens (or rejects with the reason,
// e.g. the port is taken), with Node's header and request timeouts tightened for a public listener.
import http from 'node:http';
import type { RequestListener } from 'node:http';
import { splitAddr } from './cache';
import type { Component } from './component';

export function httpComponent(name: string, addr: string, handler: RequestListener): Component & { server: http.Server } {
  const server = http.createServer({ requestTimeout: 30_000, headersTimeout: 10_000, keepAliveTimeout: 5_000 }, handler);
  server.maxHeadersCount = 100;
  return {
    name, server,
    start: () => new Promise<void>((resolve, reject) => {
      const [host, port] = splitAddr(addr);
      const onError = (err: NodeJS.ErrnoException) => reject(new Error(`cannot listen on ${addr} for ${name}: ${err.code ?? err.message}`));
      server.once('error', onError);
      server.listen(port, host, () => { server.off('error', onError); resolve(); });
    }),
    stop: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
      setTimeout(() => { server.closeAllConnections(); }, 2000).unref();
    }),
  };
}
