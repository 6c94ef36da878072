// `serial:` semantics (docs/runs.md): the targeted hosts, in render order, are cut into batches of
// `serial` hosts (an integer >= 1) or of ceil(N * p / 100) hosts for "p%" (at least one host). A
// batch starts only after every host of the previous one succeeded; once a host fails or is
// unknown, later batches are not dispatched (their hosts are reported `skipped`). No `serial:`
// means one batch of all hosts. Pure and deterministic: the workflow calls it.
import type { SerialSpec } from '../messages';

export function batchSize(total: number, serial: SerialSpec): number {
  if (total === 0) return 1;
  if (serial === null || serial === undefined) return total;
  if (typeof serial === 'number') return Math.max(1, Math.floor(serial));
  const m = /^\s*(\d+(?:\.\d+)?)\s*%\s*$/.exec(serial);
  if (m) return Math.max(1, Math.ceil((total * Number(m[1])) / 100));
  const n = Number(serial);
  return Number.isFinite(n) && n >= 1 ? Math.floor(n) : total;
}

export function splitBatches<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
