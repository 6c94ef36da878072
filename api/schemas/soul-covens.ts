// PATCH /v1/souls/{sid}: the covens of a soul, and what the change does to the incarnations.
import { labelSchema, named, type ObjectSchema } from './common';
import { soulSchema } from './souls';

export const changeCovensBody = {
  type: 'object',
  additionalProperties: false,
  required: ['covens'],
  properties: {
    covens: {
      type: 'array',
      items: labelSchema,
      maxItems: 64,
      uniqueItems: true,
      description: "the soul's new covens (all of them, replacing the old list)",
      examples: [['web', 'eu-west']],
    },
  },
} as const satisfies ObjectSchema;

export const covensChangedSchema = named('CovensChanged', {
  type: 'object',
  additionalProperties: false,
  required: ['soul', 'gained_covens', 'lost_covens', 'converging', 'left_incarnations'],
  properties: {
    soul: soulSchema,
    gained_covens: { type: 'array', items: { type: 'string' } },
    lost_covens: { type: 'array', items: { type: 'string' } },
    converging: {
      type: 'boolean',
      description:
        'true when the soul gained a coven: the ready incarnations of its covens are brought to it within seconds (docs/runs.md, "New hosts converge")',
    },
    left_incarnations: {
      type: 'array',
      items: { type: 'string' },
      description:
        'incarnations that targeted the soul before and no longer do: their files stay on the host, unmanaged; no run is started for them',
    },
  },
} as const satisfies ObjectSchema);

export interface ChangeCovensInput {
  covens: string[];
}
