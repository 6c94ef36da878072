// Append-only JSON-lines files, durable before anyone is told a write happened.
//
// A crash can leave the last line half written. Readers skip any line that does not parse, and
// the next append first ends such a torn line, so one torn write never damages a later record.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';

export interface JournalRead<T> {
  entries: T[];
  /** Lines that did not parse or failed the shape check (a torn tail after a crash, typically). */
  skipped: number;
  /** The file's size in bytes (what its entries cost a cache, roughly). */
  bytes: number;
}

/** Reads a journal; a missing file is an empty journal. `accept` filters and types each entry. */
export async function readJournal<T>(file: string, accept: (value: unknown) => value is T): Promise<JournalRead<T>> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { entries: [], skipped: 0, bytes: 0 };
    throw err;
  }
  const entries: T[] = [];
  let skipped = 0;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      const value: unknown = JSON.parse(line);
      if (accept(value)) entries.push(value);
      else skipped++;
    } catch {
      skipped++;
    }
  }
  return { entries, skipped, bytes: Buffer.byteLength(text) };
}

/**
 * Appends one JSON line and fsyncs it; a newly created file also gets its directory fsynced so the
 * file itself survives a crash. Callers must not append to the same file concurrently. Returns the
 * bytes written.
 */
export async function appendJournal(file: string, value: unknown): Promise<number> {
  const line = JSON.stringify(value) + '\n';
  const fh = await fs.open(file, 'a+', 0o600);
  let created = false;
  let prefix = '';
  try {
    const { size } = await fh.stat();
    created = size === 0;
    if (size > 0) {
      const last = Buffer.alloc(1);
      await fh.read(last, 0, 1, size - 1);
      if (last[0] !== 0x0a) prefix = '\n'; // end a torn line left by a crash
    }
    await fh.appendFile(prefix + line);
    await fh.sync();
  } finally {
    await fh.close();
  }
  if (created) {
    const dir = await fs.open(path.dirname(file), 'r');
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
  }
  return Buffer.byteLength(prefix + line);
}
