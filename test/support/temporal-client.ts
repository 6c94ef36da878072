// The one way tests and benchmarks reach the stack's Temporal frontend: plain, or with the stack's
// client certificate when the stack runs Temporal behind mutual TLS (`make demo` leaves it so, and a
// `make test` after it keeps that server). A suite that dialled the address on its own would fail
// against a demo's stack with "Failed to connect before the deadline".
import fs from 'node:fs';
import { Connection, type TLSConfig } from '@temporalio/client';
import { stackEnv, stackTemporalTlsConfig } from './stack-env';

/** Address and, in mTLS mode, the TLS options for the stack's frontend (for SDK connections of any kind). */
export function stackTemporalConnectionOptions(): { address: string; tls?: TLSConfig } {
  const t = stackTemporalTlsConfig();
  const tls = t && {
    serverRootCACertificate: fs.readFileSync(t.ca),
    clientCertPair: { crt: fs.readFileSync(t.cert), key: fs.readFileSync(t.key) },
    ...(t.server_name ? { serverNameOverride: t.server_name } : {}),
  };
  return { address: stackEnv().TEMPORAL_ADDRESS, ...(tls ? { tls } : {}) };
}

export function connectStackTemporal(): Promise<Connection> {
  return Connection.connect(stackTemporalConnectionOptions());
}
