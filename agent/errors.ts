// Errors a soul command reports to the person at the host: what is wrong and the fix, one each
// (interface spec 7). `exitCode` 2 means the configuration or the command line is wrong; 1 that
// the command ran and failed.
export class SoulError extends Error {
  constructor(
    message: string,
    readonly fix: string,
    readonly exitCode: 1 | 2 = 1,
  ) {
    super(message);
    this.name = 'SoulError';
  }

  /** The text printed on stderr: the message, then the fix on its own line. */
  render(): string {
    return `soul: ${this.message}\n  fix: ${this.fix}\n`;
  }
}

export const CA_FIX =
  "pre-load the CA certificate of the keeper's PKI root on this host and set keeper.tls.ca to its path (no trust on first use)";
export const TLS_FIX =
  "keeper.tls.ca must be the CA of the keeper's PKI root, and the endpoint host must be in the server certificate's SAN";

export function caEmpty(detail: string): SoulError {
  return new SoulError(`keeper.tls.ca is empty: ${detail}`, CA_FIX, 2);
}

export function tokenRefused(sid: string): SoulError {
  return new SoulError(
    'bootstrap token invalid, expired or used',
    `reissue the token (POST /v1/souls/${sid}/issue-token, with force while an unused one is active) and run soul init with the new token`,
  );
}

export function identityExists(seed: string): SoulError {
  return new SoulError(
    `an identity already exists under ${seed}`,
    `this host is already onboarded: start it with soul run. Remove ${seed} only if you mean to re-enroll (and reissue a token)`,
  );
}

export function notFqdn(name: string): SoulError {
  return new SoulError(
    `the host name "${name}" is not a fully-qualified domain name`,
    "give the host its FQDN under the PKI's allowed domain (set the hostname, or its canonical name in /etc/hosts): the SID is the host's FQDN",
  );
}

export function sidMismatch(fqdn: string, sid: string, file: string): SoulError {
  return new SoulError(
    `the host's FQDN "${fqdn}" does not equal sid "${sid}" in ${file}`,
    'set sid to the FQDN the soul was registered with and give the host that name; the certificate names the registered SID',
    2,
  );
}

export function certificateExpired(sid: string, notAfter: Date): SoulError {
  return new SoulError(
    `the certificate of ${sid} expired at ${notAfter.toISOString()} while the soul was not connected, so it could not be renewed`,
    `an operator reissues a bootstrap token (keeperctl souls issue-token ${sid} --force, or POST /v1/souls/${sid}/issue-token with force); then run soul init --token=<token> on this host (it replaces the expired identity)`,
  );
}
