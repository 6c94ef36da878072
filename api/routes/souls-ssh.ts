// Registration of an SSH soul (push mode, docs/ssh.md): the checks the schema cannot make, each
// answered as a 400 naming the field, then the record without a bootstrap token. The private key
// is only named here (`credential_ref`); the keeper reads it at connect time.
import type { Knex } from 'knex';
import { parseReference } from '../../common/secret';
import { credentialRefProblem } from '../../secrets/scenario';
import { registerSshSoul, type SoulRecord } from '../../db/repos/souls';
import { parseHostKey } from '../../hub/ssh/host-key';
import { problems, type FieldError } from '../problems';
import { named, sidSchema, nullableTimestampSchema, type ObjectSchema } from '../schemas/common';
import type { RegisterSoulInput } from '../schemas/souls';

export async function registerSshHost(db: Knex, body: RegisterSoulInput, scenarioPrefix: string): Promise<SoulRecord> {
  const ssh = body.ssh;
  if (ssh === undefined) {
    throw problems.invalid('transport ssh needs the ssh block (address, user, host_key, credential_ref)', [
      { path: '/body/ssh', message: 'is required for transport ssh' },
    ]);
  }
  const errors: FieldError[] = [];
  if (parseReference(ssh.credential_ref) === null) {
    errors.push({
      path: '/body/ssh/credential_ref',
      message: 'must be secretstore:<path>#<field> naming the private key in the secrets store',
    });
  } else {
    // Read with the scenario role's token, which reaches only the scenario prefix (issue 28).
    const why = credentialRefProblem(ssh.credential_ref, scenarioPrefix);
    if (why) errors.push({ path: '/body/ssh/credential_ref', message: why });
  }
  let hostKey: string | null = null;
  if (ssh.host_key !== undefined) {
    const k = parseHostKey(ssh.host_key);
    if ('error' in k)
      errors.push({
        path: '/body/ssh/host_key',
        message: `must be the host's public key (<type> <base64>): ${k.error}`,
      });
    // Stored without its comment: the pin is the key, not the label.
    else hostKey = `${k.type} ${k.blob.toString('base64')}`;
  } else if (!ssh.trust_on_first_use) {
    errors.push({
      path: '/body/ssh/host_key',
      message: 'is required unless trust_on_first_use is true (pinning the host key is the default)',
    });
  }
  if (errors.length > 0) throw problems.invalid('the ssh block is not valid', errors);
  return registerSshSoul(db, {
    sid: body.sid,
    covens: body.covens,
    ssh: {
      address: ssh.address,
      port: ssh.port,
      user: ssh.user,
      host_key: hostKey,
      credential_ref: ssh.credential_ref,
      sudo: ssh.sudo,
      trust_on_first_use: ssh.trust_on_first_use,
    },
  });
}

export const soulCheckSchema = named('SoulCheck', {
  type: 'object',
  additionalProperties: false,
  required: ['sid', 'reachable', 'reason', 'facts', 'checked_at'],
  properties: {
    sid: sidSchema,
    reachable: { type: 'boolean', description: 'connected, host key as pinned, FQDN equal to the SID, facts read' },
    reason: { type: ['string', 'null'], description: 'why not (e.g. "host key changed"); null when reachable' },
    facts: { type: ['object', 'null'], description: 'the soulprint read from the host; null when not reachable' },
    checked_at: nullableTimestampSchema,
  },
} as const satisfies ObjectSchema);
