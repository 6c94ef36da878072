// Errors from the secrets store, worded for the operator: what failed, where, and the fix. They never
// carry a secret value or a token.
export type SecretStoreFailure =
  | 'unreachable'
  | 'denied'
  | 'not_found'
  | 'missing_field'
  | 'login_failed'
  | 'bad_reference'
  | 'refused'
  | 'outside_prefix'
  | 'failed';

export class SecretStoreError extends Error {
  constructor(
    readonly kind: SecretStoreFailure,
    message: string,
  ) {
    super(message);
    this.name = 'SecretStoreError';
  }
}

interface HttpishError {
  response?: { statusCode?: number; status?: number; body?: { errors?: unknown } };
  code?: string;
  cause?: { code?: string };
}

const TLS_TRUST = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_UNTRUSTED',
]);

/** Classifies a node-vault/axios error without reading its body (which may echo request data). */
export function classify(err: unknown, what: string, addr: string): SecretStoreError {
  if (err instanceof SecretStoreError) return err;
  const e = err as HttpishError;
  const status = e.response?.statusCode ?? e.response?.status;
  const code = e.code ?? e.cause?.code;
  if (status === undefined) {
    // The store answered, but with a certificate Node does not trust: the fix is the CA, not the address.
    if (code !== undefined && TLS_TRUST.has(code)) {
      return new SecretStoreError(
        'unreachable',
        `the secrets store at ${addr} presented a certificate this keeper does not trust (${code}) while ${what}; fix: set secretstore.ca_file to the PEM of the CA that signed it (docs/install.md)`,
      );
    }
    return new SecretStoreError(
      'unreachable',
      `the secrets store at ${addr} is unreachable (${code ?? 'no answer'}) while ${what}; start it or fix secretstore.addr`,
    );
  }
  if (status === 403) {
    return new SecretStoreError(
      'denied',
      `the secrets store denied ${what} (HTTP 403); check the AppRole policy grants read on that path`,
    );
  }
  if (status === 404)
    return new SecretStoreError('not_found', `the secrets store has nothing at ${what} (HTTP 404); check the path`);
  if (status === 400) {
    // A request the store will not grant as asked (for the PKI: names or key type outside the role).
    // Its first error line is kept: it names the rule, and the requests sent here carry no secret.
    const errors = e.response?.body?.errors;
    const first = Array.isArray(errors) && typeof errors[0] === 'string' ? `: ${errors[0].slice(0, 300)}` : '';
    return new SecretStoreError('refused', `the secrets store refused ${what} (HTTP 400)${first}`);
  }
  return new SecretStoreError('failed', `the secrets store answered HTTP ${status} while ${what}`);
}
