// The levels of a log line, in their own file so the logger (common/logger.ts) and the journal's
// priority prefix (common/journal.ts), which the logger writes with, both import them downward.
export type Level = 'debug' | 'info' | 'warn' | 'error';
