import type { Rule } from './types';

export const sl025: Rule = {
  id: 'SL025',
  name: 'template-vars',
  description:
    "A core.file.rendered template reads a top-level field that the task's `vars` never provide (the template's data is exactly `vars`).",
  help: "Add the field under the task's `vars`, or guard the read in the template ({{ with .x }} or index).",
};
