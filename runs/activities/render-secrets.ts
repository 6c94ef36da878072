// What render needs to place secrets (issue 12): the run's marker nonce (derived, so dispatch finds
// the same one without storing it), the keeper's scenario prefix, and the incarnation's own prefix
// where the API stored values given to secret inputs.
import { incarnationSecretPrefix } from '../../common/secret';
import type { RenderSecretsConfig } from './deps';
import { markerNonce } from './secrets';

export function renderSecrets(cfg: RenderSecretsConfig, applyId: string, incarnation: { name: string; secrets_key: string | null }) {
  return {
    nonce: markerNonce(cfg.nonceKey, applyId),
    keeperPrefix: cfg.scenarioPrefix,
    inputPrefixes: [incarnationSecretPrefix(cfg.scenarioPrefix, incarnation)],
  };
}
