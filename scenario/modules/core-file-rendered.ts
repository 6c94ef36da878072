import type { ModuleSpec } from './types';
import { ABS_PATH, FILE_MODE } from './core-file-present';

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
      path: ABS_PATH,
      template: { type: 'string', pattern: '^[^/].*\\.tmpl$' },
      vars: { type: 'object' },
      mode: FILE_MODE,
      // Filled in by render; an author never writes it.
      content: { type: 'string' },
    },
  },
};
