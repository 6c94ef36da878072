// What the keeper adds to every service load (issue 13 item 7, issue 12 item 5): its git source
// policy (config services.git) and, for a service with a credential_ref, the credential read from
// the secrets store for this one load, with the scenario role's token (secrets/scenario.ts: below
// secretstore.scenario_prefix only, issue 28). The credential lives in memory for the clone only:
// the scenario engine hands it to git through an askpass script (scenario/load/git.ts).
import type { ScenarioPort } from './activities/scenario-port';
import type { GitCredential } from '../scenario/load/git';
import { splitCredentialRef, type GitPolicy } from '../scenario/load/git-policy';
import { credentialRefProblem, type ScenarioSecrets } from '../secrets/scenario';

// `prefix` is part of the type so the keeper's own client (secrets/client.ts) cannot be passed here.
type CredentialReader = Pick<ScenarioSecrets, 'resolveRef' | 'prefix'>;

/** A username in the same secret (field `username`) is used when present; most token hosts accept any. */
export const DEFAULT_GIT_USERNAME = 'keeper';

export async function resolveGitCredential(secrets: CredentialReader, credentialRef: string): Promise<GitCredential> {
  // Refused at registration already (api/routes/services.ts); again here for rows older than the rule.
  const why = credentialRefProblem(credentialRef, secrets.prefix);
  if (why) throw new Error(`the service's credential_ref ${why}; nothing was read`);
  const { path, field } = splitCredentialRef(credentialRef);
  let password: string;
  try {
    password = await secrets.resolveRef(path, field);
  } catch (err) {
    throw new Error(`cannot read the service's credential_ref ${credentialRef}: ${(err as Error).message}`);
  }
  // Read from the entry just fetched (useCache): one request to the store per load.
  const username = await secrets.resolveRef(path, 'username', { useCache: true }).catch(() => DEFAULT_GIT_USERNAME);
  return { username, password };
}

export function withGitSources(
  port: ScenarioPort,
  opts: { policy: GitPolicy; secrets: CredentialReader },
): ScenarioPort {
  return {
    ...port,
    async loadService(args) {
      const credential = args.credentialRef ? await resolveGitCredential(opts.secrets, args.credentialRef) : undefined;
      return port.loadService({ ...args, policy: opts.policy, ...(credential ? { credential } : {}) });
    },
  };
}
