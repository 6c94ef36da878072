// Checks an endpoint's TLS the way gRPC will (CA from keeper.tls.ca, the endpoint host against the
// certificate's SAN) and names what is wrong in the spec's words (interface spec 7): "certificate
// validation failed" with "unknown authority" or the SAN problem. gRPC itself folds these into a
// generic UNAVAILABLE, so `soul init` asks first and reports precisely.
import net from 'node:net';
import tls from 'node:tls';
import { SoulError, TLS_FIX } from './errors';

const AUTHORITY_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_SIGNATURE_FAILURE',
  'CERT_UNTRUSTED',
  'INVALID_CA',
]);

export type TlsCheck = { ok: true } | { ok: false; reachable: boolean; error: SoulError };

export function checkTls(host: string, port: number, ca: Buffer, timeoutMs = 5000): Promise<TlsCheck> {
  const where = `${host}:${port}`;
  return new Promise((resolve) => {
    const socket = tls.connect({
      host,
      port,
      ca,
      ALPNProtocols: ['h2'],
      rejectUnauthorized: true,
      ...(net.isIP(host) ? {} : { servername: host }),
    });
    const done = (r: TlsCheck) => {
      socket.destroy();
      resolve(r);
    };
    socket.setTimeout(timeoutMs, () =>
      done({
        ok: false,
        reachable: false,
        error: new SoulError(
          `cannot reach the keeper at ${where}: no TLS answer within ${timeoutMs} ms`,
          'check keeper.endpoints and that the keeper is running',
        ),
      }),
    );
    socket.once('secureConnect', () => done({ ok: true }));
    socket.once('error', (err: NodeJS.ErrnoException) => {
      const code = err.code ?? '';
      if (AUTHORITY_CODES.has(code)) {
        return done({
          ok: false,
          reachable: true,
          error: new SoulError(
            `certificate validation failed: unknown authority: keeper.tls.ca does not validate the certificate of the keeper at ${where} (${code})`,
            TLS_FIX,
          ),
        });
      }
      if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
        return done({
          ok: false,
          reachable: true,
          error: new SoulError(
            `certificate validation failed: the keeper's certificate at ${where} does not name "${host}" in its SAN (${err.message.replace(/^.*?: /, '')})`,
            TLS_FIX,
          ),
        });
      }
      if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID') {
        return done({
          ok: false,
          reachable: true,
          error: new SoulError(
            `certificate validation failed: the keeper's certificate at ${where} is outside its validity period (${code})`,
            "renew the keeper's server leaf (repeat the issue and restart the keeper) or correct this host's clock",
          ),
        });
      }
      done({
        ok: false,
        reachable: false,
        error: new SoulError(
          `cannot reach the keeper at ${where}: ${code || err.message}`,
          'check keeper.endpoints (host and port) and that the keeper is running',
        ),
      });
    });
  });
}
