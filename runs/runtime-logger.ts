// The Temporal SDK logs every worker state change at INFO on stdout. Its process-wide Runtime is
// installed once, before the first worker, with a logger that forwards warnings and errors to the
// keeper's JSON log and drops the rest.
import { DefaultLogger, Runtime, type LogLevel } from '@temporalio/worker';
import type { Logger } from '../common/logger';

let installed = false;

export function installTemporalRuntime(log: Logger): void {
  if (installed) return;
  installed = true;
  const sdk = log.child({ component: 'temporal-sdk' });
  try {
    Runtime.install({
      logger: new DefaultLogger(
        'WARN',
        (entry: { level: LogLevel; message: string; meta?: Record<string, unknown> }) => {
          // The dispatch-only worker registers no workflows on purpose.
          if (entry.message.startsWith('No workflows registered')) return;
          const fields = { task_queue: entry.meta?.taskQueue };
          if (entry.level === 'ERROR') sdk.error(entry.message, fields);
          else sdk.warn(entry.message, fields);
        },
      ),
    });
  } catch {
    // Another part of this process (a test harness) installed the Runtime first; keep its choice.
  }
}
