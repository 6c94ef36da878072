// What render needs to place secrets (issues 12, 28): the key it signs each step's secret handles
// with (derived from the keeper's key under its own label, so dispatch derives the same one
// without storing it), the apply_id the handles are bound to, the keeper's scenario prefix, and the
// incarnation's own prefix where the API stored values given to secret inputs.
import { incarnationSecretPrefix } from '../../common/secret';
import { deriveHandleKey } from '../../scenario/secrets/handles';
import type { RenderSecretsConfig } from './deps';

export function renderSecrets(
  cfg: RenderSecretsConfig,
  applyId: string,
  incarnation: { name: string; secrets_key: string | null },
) {
  return {
    binding: applyId,
    handleKey: deriveHandleKey(cfg.nonceKey),
    keeperPrefix: cfg.scenarioPrefix,
    inputPrefixes: [incarnationSecretPrefix(cfg.scenarioPrefix, incarnation)],
  };
}
