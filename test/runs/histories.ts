// Recorded workflow histories for the replay test. `KEEPER_RECORD_HISTORIES=1` makes the lifecycle
// suite write the histories of its representative runs to test/fixtures/histories/ (commit them
// when a workflow change is meant to be incompatible; see docs/runs.md).
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@temporalio/client';
import { repoRoot } from '../support/repo';
import { connectStackTemporal } from '../support/temporal-client';

export const HISTORIES_DIR = () => path.join(repoRoot(), 'test', 'fixtures', 'histories');

export async function recordHistories(runs: Record<string, string>): Promise<void> {
  if (process.env.KEEPER_RECORD_HISTORIES !== '1') return;
  const connection = await connectStackTemporal();
  try {
    const client = new Client({ connection, namespace: 'default' });
    fs.mkdirSync(HISTORIES_DIR(), { recursive: true });
    for (const [name, applyId] of Object.entries(runs)) {
      const history = await client.workflow.getHandle(applyId).fetchHistory();
      fs.writeFileSync(
        path.join(HISTORIES_DIR(), `${name}.json`),
        JSON.stringify({ workflowId: applyId, history }, null, 1),
      );
    }
  } finally {
    await connection.close();
  }
}
