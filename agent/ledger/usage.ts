// What a ledger directory costs on disk, for the soul's metrics and the soak benchmark: the number
// of apply journals and their bytes (file sizes, the figure docs/agents.md bounds), and the bytes
// the filesystem allocated for them (a journal of one short run still takes a whole block).
import { promises as fs } from 'node:fs';
import * as path from 'node:path';

export interface LedgerUsage {
  files: number;
  bytes: number;
  allocatedBytes: number;
}

export async function ledgerUsage(dir: string): Promise<LedgerUsage> {
  let names: string[];
  try {
    names = await fs.readdir(dir);
  } catch {
    return { files: 0, bytes: 0, allocatedBytes: 0 };
  }
  const usage: LedgerUsage = { files: 0, bytes: 0, allocatedBytes: 0 };
  for (const name of names) {
    if (!name.endsWith('.jsonl')) continue;
    // A journal pruned between readdir and stat is simply not counted.
    const st = await fs.stat(path.join(dir, name)).catch(() => null);
    if (st === null) continue;
    usage.files += 1;
    usage.bytes += st.size;
    usage.allocatedBytes += st.blocks * 512;
  }
  return usage;
}
