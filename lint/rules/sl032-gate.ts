import type { Rule } from './types';

export const sl032: Rule = {
  id: 'SL032',
  name: 'batch-gate',
  description:
    'A `gate:` that cannot apply: without `serial:` (one batch, nothing to wait between), waiting for nothing (no `health:`, no `approval: true`), or a `timeout:`/`interval:` that is no duration, out of bounds, or without `health:`. A `health:` expression is checked like `failed_when` (SL011, SL012, SL022).',
  help: 'See docs/runs.md "Gates between batches".',
};
