// The journal reads a syslog priority prefix (`<3>`) at the start of each line a unit writes to
// stdout or stderr (SyslogLevelPrefix=, on by default). Without it every line lands at the unit's
// default priority (info), and `journalctl -p warning` hides the errors (issue 37 row 7). The
// prefix is written only when stderr is the journal's stream, which systemd announces in
// $JOURNAL_STREAM as "<device>:<inode>" of that stream; a terminal or a file gets plain lines.
import fs from 'node:fs';
import type { Level } from './log-level';

// sd-daemon(3): SD_ERR 3, SD_WARNING 4, SD_INFO 6, SD_DEBUG 7.
const PRIORITY: Record<Level, number> = { debug: 7, info: 6, warn: 4, error: 3 };

let onJournal: boolean | undefined;

/** True when fd 2 is the stream systemd connected to the journal (checked once per process). */
export function stderrIsJournal(): boolean {
  if (onJournal === undefined) {
    const want = process.env.JOURNAL_STREAM;
    onJournal = false;
    if (want) {
      try {
        const st = fs.fstatSync(2);
        onJournal = want === `${st.dev}:${st.ino}`;
      } catch {
        /* no stderr: nothing to prefix */
      }
    }
  }
  return onJournal;
}

/** The priority prefix for a line at `level`, or '' when stderr is not the journal. */
export function journalPrefix(level: Level): string {
  return stderrIsJournal() ? `<${PRIORITY[level]}>` : '';
}

/** A fatal message as the journal should get it: one line (an event is one line), priority err. */
export function fatalLine(message: string): string {
  if (!stderrIsJournal()) return message.endsWith('\n') ? message : `${message}\n`;
  return `${journalPrefix('error')}${message
    .trim()
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .join(' ')}\n`;
}
