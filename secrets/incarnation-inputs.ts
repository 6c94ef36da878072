// The values given to an incarnation's secret inputs go when the incarnation goes (issue 28): a
// forced DELETE and a committed destroy remove everything below its prefix in the store. The prefix
// is keyed by the incarnation's life (common/secret.ts), so a value left behind by a failed purge is
// still out of reach of any later incarnation with the same name; the failure is logged, never the
// values.
import type { Logger } from '../common/logger';
import { incarnationSecretPrefix } from '../common/secret';
import type { ScenarioSecrets } from './scenario';

export async function purgeSecretInputs(
  store: Pick<ScenarioSecrets, 'deleteBelow'>,
  scenarioPrefix: string,
  inc: { name: string; secrets_key: string | null },
  log: Logger,
): Promise<void> {
  const prefix = incarnationSecretPrefix(scenarioPrefix, inc);
  try {
    const n = await store.deleteBelow(prefix);
    if (n > 0)
      log.info('secret inputs of a deleted incarnation removed from the store', {
        incarnation: inc.name,
        prefix,
        secrets: n,
      });
  } catch (err) {
    log.warn(
      'cannot remove the secret inputs of a deleted incarnation (out of reach of later incarnations all the same)',
      { incarnation: inc.name, prefix, error: (err as Error).message },
    );
  }
}
