// Go-style durations ("720h", "1h30m", "250ms"), the form every duration in the config takes.
const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h)/gy;

export const DURATION_PATTERN = '^(\\d+(\\.\\d+)?(ms|s|m|h))+$';

/** Parses a duration into milliseconds; throws a message naming the accepted form. */
export function parseDuration(text: string): number {
  if (typeof text !== 'string' || !new RegExp(DURATION_PATTERN).test(text)) {
    throw new Error(`"${String(text)}" is not a duration; write it like 30s, 15m, 24h or 1h30m`);
  }
  PART.lastIndex = 0;
  let total = 0;
  for (let m = PART.exec(text); m; m = PART.exec(text)) {
    total += Number(m[1]) * (UNITS[m[2] as string] as number);
  }
  return Math.round(total);
}

export function formatDuration(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}
