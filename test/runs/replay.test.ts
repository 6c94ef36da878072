// Replay: the recorded histories of representative runs (create, no-op re-run, failed and locked,
// retry after unlock, render error, upgrade) must replay against the current workflow code. A
// failure here means a change would break runs that are in flight when a keeper is upgraded.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { workflowBundle } from '../../runs/bundle';
import { installTemporalRuntime } from '../../runs/runtime-logger';
import { silentLogger } from '../../common/logger';
import { HISTORIES_DIR } from './histories';

describe('workflow replay of recorded run histories', function () {
  this.timeout(120_000);

  it('replays every recorded history without nondeterminism', async () => {
    const files = fs
      .readdirSync(HISTORIES_DIR())
      .filter((f) => f.endsWith('.json'))
      .sort();
    assert.ok(files.length >= 5, `expected recorded histories in ${HISTORIES_DIR()}, found ${files.length}`);
    const histories = files.map(
      (f) =>
        JSON.parse(fs.readFileSync(path.join(HISTORIES_DIR(), f), 'utf8')) as { workflowId: string; history: unknown },
    );
    installTemporalRuntime(silentLogger);
    const bundle = await workflowBundle();
    const failures: string[] = [];
    let replayed = 0;
    for await (const r of Worker.runReplayHistories(
      { workflowBundle: bundle },
      histories.map((h) => ({
        // Stored as protobufjs' own JSON (camelCase, enum names): fromObject reads it back losslessly.
        workflowId: h.workflowId,
        history: temporal.api.history.v1.History.fromObject(h.history as Record<string, unknown>),
      })),
    )) {
      replayed++;
      if (r.error) failures.push(`${r.workflowId}: ${r.error.message}`);
    }
    assert.equal(replayed, files.length);
    assert.deepEqual(failures, []);
  });
});
