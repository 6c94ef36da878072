import type { ModuleSpec } from './types';

/** A file name cron reads in /etc/cron.d: run-parts' names only (cron skips a name with a dot). */
export const CRON_NAME = { type: 'string', minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_-]+$' } as const;
/** Five fields (minute hour day month weekday) separated by single spaces, or a nickname. */
export const CRON_SCHEDULE = {
  type: 'string',
  maxLength: 512,
  pattern: '^(@(reboot|yearly|annually|monthly|weekly|daily|midnight|hourly)|[0-9A-Za-z*/,-]+( [0-9A-Za-z*/,-]+){4})$',
} as const;
const USER = { type: 'string', minLength: 1, maxLength: 32, pattern: '^[a-z_][a-z0-9_.-]*$' } as const;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

type Problem = { param: string; message: string };

/** Cron turns an unescaped % in a command into a newline (the rest becomes the command's input). */
export function cronProblems(p: Record<string, unknown>): Problem[] {
  const out: Problem[] = [];
  const command = p['command'];
  if (typeof command === 'string' && /(^|[^\\])%/.test(command))
    out.push({
      param: 'command',
      message:
        'parameter "command" holds an unescaped %, which cron turns into a newline; write \\% for a literal % (date +\\%F)',
    });
  const env = p['env'];
  if (env !== null && typeof env === 'object' && !Array.isArray(env)) {
    for (const [k, v] of Object.entries(env)) {
      if (!ENV_NAME.test(k))
        out.push({
          param: 'env',
          message: `parameter "env" has the name ${JSON.stringify(k)}; a name is [A-Za-z_][A-Za-z0-9_]*`,
        });
      else if (typeof v !== 'string' || /[\n\r]/.test(v))
        out.push({ param: 'env', message: `parameter "env": the value of ${k} must be a string of one line` });
    }
  }
  return out;
}

/** A cron job: the file /etc/cron.d/<name> holds exactly this entry (and its environment lines). */
export const coreCronPresent: ModuleSpec = {
  name: 'core.cron.present',
  description: 'a cron job runs on a schedule (/etc/cron.d/<name>)',
  params: {
    type: 'object',
    additionalProperties: false,
    required: ['name', 'schedule', 'command'],
    properties: {
      name: CRON_NAME,
      schedule: CRON_SCHEDULE,
      command: { type: 'string', minLength: 1, maxLength: 16384, pattern: '^[^\\n\\r]*\\S[^\\n\\r]*$' },
      user: USER,
      // Names and values checked by cronProblems (a name is [A-Za-z_][A-Za-z0-9_]*, a value one line).
      env: { type: 'object' },
    },
  },
  check: cronProblems,
};

/** No cron job of this name: /etc/cron.d/<name> does not exist. */
export const coreCronAbsent: ModuleSpec = {
  name: 'core.cron.absent',
  description: 'no cron job of this name (/etc/cron.d/<name> removed)',
  params: {
    type: 'object',
    additionalProperties: false,
    required: ['name'],
    properties: { name: CRON_NAME },
  },
};
