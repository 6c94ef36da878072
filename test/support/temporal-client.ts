// A Temporal connection to the stack's frontend for tests and benchmarks: plain, or with the
// stack's client certificate when the stack runs Temporal behind mutual TLS.
import fs from 'node:fs';
import { Connection } from '@temporalio/client';
import { stackEnv, stackTemporalTlsConfig } from './stack-env';

export function connectStackTemporal(): Promise<Connection> {
  const t = stackTemporalTlsConfig();
  const tls = t && {
    serverRootCACertificate: fs.readFileSync(t.ca),
    clientCertPair: { crt: fs.readFileSync(t.cert), key: fs.readFileSync(t.key) },
    ...(t.server_name ? { serverNameOverride: t.server_name } : {}),
  };
  return Connection.connect({ address: stackEnv().TEMPORAL_ADDRESS, ...(tls ? { tls } : {}) });
}
