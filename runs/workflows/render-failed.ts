// The reason a run or a plan ends with when its render failed: how many errors and which keeper
// rendered, since keepers of a cluster may differ in what they can load (issue 33). Pure and
// deterministic: the workflows call it; the words are what operators and tests read, so a run's and
// a plan's say the same.
import type { RenderOutcome } from '../messages';

/** `then` is what the failure meant, put before the keeper (a run: "; nothing was applied"). */
export function renderFailedReason(render: Extract<RenderOutcome, { ok: false }>, then = ''): string {
  const on = render.kid ? ` (rendered on keeper ${render.kid})` : '';
  return `render failed with ${render.errorCount} error(s)${then}${on}`;
}
