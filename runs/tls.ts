// Mutual TLS to the Temporal frontend (config temporal.tls; issue 13, item 6). One reader for the
// client (API -> start runs) and both workers, so every connection the keeper opens to Temporal
// presents the same client certificate and pins the same CA. The files are read at connect time:
// a renewed certificate is used from the next (re)connect of the process.
import fs from 'node:fs';
import type { TLSConfig } from '@temporalio/client';

/** The shape of config temporal.tls (platform/config/types.ts TemporalTls), paths already absolute. */
export interface TemporalTlsFiles {
  ca: string;
  cert: string;
  key: string;
  server_name?: string;
}

export function temporalTlsOptions(tls: TemporalTlsFiles | undefined): TLSConfig | undefined {
  if (!tls) return undefined;
  const read = (key: 'ca' | 'cert' | 'key') => {
    try {
      return fs.readFileSync(tls[key]);
    } catch (err) {
      throw new Error(
        `temporal.tls.${key}: cannot read ${tls[key]} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
      );
    }
  };
  return {
    serverRootCACertificate: read('ca'),
    clientCertPair: { crt: read('cert'), key: read('key') },
    ...(tls.server_name ? { serverNameOverride: tls.server_name } : {}),
  };
}
