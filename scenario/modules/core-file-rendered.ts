import type { ModuleSpec } from './types';
import { FILE_COMMON } from './core-file-present';

/**
 * A file rendered from `templates/<template>` with `vars` exists. Render
 * adds the rendered `content` to the step, so the soul writes it exactly as
 * core.file.present would and never needs the repository.
 */
export const coreFileRendered: ModuleSpec = {
  name: 'core.file.rendered',
  description: 'a file rendered from a .tmpl template exists',
  params: {
    type: 'object',
    additionalProperties: false,
    required: ['path', 'template'],
    properties: {
      ...FILE_COMMON,
      template: { type: 'string', pattern: '^[^/].*\\.tmpl$' },
      vars: { type: 'object' },
      // Filled in by render; an author never writes it.
      content: { type: 'string' },
    },
  },
  // The soul receives the rendered content, never the template or its vars.
  wire: {
    type: 'object',
    additionalProperties: false,
    required: ['path', 'content'],
    properties: { ...FILE_COMMON, content: { type: 'string' } },
  },
  programParams: ['validate'],
};
