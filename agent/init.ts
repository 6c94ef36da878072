// `soul init` (interface spec 4.4): find the SID (the host's FQDN, equal to the config's sid), make
// a key and a CSR, present token + CSR to the bootstrap listener of the first endpoint (by
// priority) whose TLS checks out against keeper.tls.ca, verify what comes back, store the
// identity under paths.seed, exit. Nothing of the token or the key is ever printed.
import { BOOTSTRAP_ENROLL } from '../proto/codec';
import type { EnrollRequest, EnrollResponse } from '../proto/types';
import { VERSION as SOUL_VERSION } from '../common/version';
import { byPriority, readCa, type Endpoint, type SoulConfig } from './config';
import { createCsr, generateKey, privateKeyPem } from './csr';
import { SoulError, identityExists, sidMismatch, tokenRefused } from './errors';
import { findFqdn } from './fqdn';
import { GrpcStatus, unaryCall, type GrpcError } from './grpc-stream';
import { identityExpired, identityPresent, removeIdentity, storeIdentity } from './identity';
import { checkTls } from './tls-check';
import { verifyIssued } from './verify-issued';

export interface InitOptions {
  config: SoulConfig;
  token: string;
  fqdn?: () => Promise<string>;
  timeoutMs?: number;
}
export interface InitResult {
  sid: string;
  serial: string;
  notAfter: Date;
  endpoint: string;
}

export async function soulInit(opts: InitOptions): Promise<InitResult> {
  const { config } = opts;
  const ca = readCa(config);
  if (identityPresent(config.paths.seed)) {
    // An identity whose certificate expired (the host was offline past its expiry) is worth nothing:
    // it is replaced, so that a new token and soul init are all it takes (docs/certificates.md).
    if (!identityExpired(config.paths.seed)) throw identityExists(config.paths.seed);
  }
  const fqdn = await (opts.fqdn ?? findFqdn)();
  if (fqdn !== config.sid) throw sidMismatch(fqdn, config.sid, config.file);

  const key = generateKey();
  const csrPem = createCsr(key, config.sid);
  let firstProblem: SoulError | undefined;
  for (const ep of byPriority(config.keeper.endpoints)) {
    const check = await checkTls(ep.host, ep.bootstrap_port, ca);
    if (!check.ok) {
      // A certificate problem outranks an unreachable endpoint in what is finally reported.
      if (!firstProblem || (check.reachable && !firstProblem.message.startsWith('certificate')))
        firstProblem = check.error;
      continue;
    }
    const res = await enrollAt(
      ep,
      ca,
      { token: opts.token, sid: config.sid, csr_pem: csrPem },
      opts.timeoutMs ?? 15_000,
    );
    if ('unreachable' in res) {
      firstProblem ??= res.unreachable;
      continue;
    }
    const cert = verifyIssued(res.certificate_pem, res.chain_pem, config.sid, ca, key);
    if (identityPresent(config.paths.seed)) removeIdentity(config.paths.seed);
    storeIdentity(config.paths.seed, {
      keyPem: privateKeyPem(key),
      certPem: res.certificate_pem,
      chainPem: res.chain_pem.join('\n'),
    });
    return {
      sid: config.sid,
      serial: res.serial,
      notAfter: new Date(cert.validTo),
      endpoint: `${ep.host}:${ep.bootstrap_port}`,
    };
  }
  throw firstProblem ?? new SoulError('no keeper endpoint answered', 'check keeper.endpoints');
}

async function enrollAt(
  ep: Endpoint,
  ca: Buffer,
  req: EnrollRequest,
  timeoutMs: number,
): Promise<EnrollResponse | { unreachable: SoulError }> {
  // Server-only TLS (the soul has no certificate yet), checked against keeper.tls.ca like the stream.
  const target = { target: `${ep.host}:${ep.bootstrap_port}`, ca, userAgent: `soul/${SOUL_VERSION}` };
  try {
    return await unaryCall(target, BOOTSTRAP_ENROLL, req, timeoutMs);
  } catch (e) {
    const err = e as GrpcError;
    switch (err.code) {
      case GrpcStatus.UNAUTHENTICATED:
        throw tokenRefused(req.sid);
      case GrpcStatus.RESOURCE_EXHAUSTED:
        throw new SoulError(err.details, 'wait for the window to pass and check that the token and sid are right');
      case GrpcStatus.INVALID_ARGUMENT:
        throw new SoulError(`the keeper refused the request: ${err.details}`, 'check sid in the configuration');
      case GrpcStatus.FAILED_PRECONDITION:
        throw new SoulError(
          `the keeper refused to issue a certificate: ${err.details}`,
          'nothing to change on this host: the token stays valid; once an operator has fixed the PKI role, run soul init again with the same token',
        );
      case GrpcStatus.UNAVAILABLE:
      case GrpcStatus.DEADLINE_EXCEEDED:
        return {
          unreachable: new SoulError(
            `the keeper at ${ep.host}:${ep.bootstrap_port} cannot enroll now: ${err.details}`,
            'retry later; the keeper needs its database and PKI to enroll a soul',
          ),
        };
      default:
        throw new SoulError(`enrollment failed: ${err.details ?? err.message}`, 'see the keeper log');
    }
  }
}
