import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { freePort } from '../../test/support/ports';
import { collectGarbage, inspectFlag } from './inspector-gc';

// A process that prints a line for every full collection it sees, as the keeper's and the soul's
// `gc` observer counts them (common/heap-after-gc.ts), and otherwise idles.
const WATCHER = `
const { PerformanceObserver, constants } = require('node:perf_hooks');
new PerformanceObserver((l) => { for (const e of l.getEntries()) if (e.detail.kind === constants.NODE_PERFORMANCE_GC_MAJOR) console.log('major'); })
  .observe({ entryTypes: ['gc'] });
console.log('ready');
setInterval(() => {}, 1000);
`;

describe('a full collection forced over the inspector (the soak’s forced mode)', () => {
  it('runs a mark-sweep in the other process at each call, which its gc observer sees', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, [inspectFlag(port), '-e', WATCHER], { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      let out = '';
      const lines = (word: string) => out.split('\n').filter((l) => l === word).length;
      const until = (cond: () => boolean) =>
        new Promise<void>((resolve, reject) => {
          const check = () => {
            if (cond()) resolve();
          };
          child.stdout!.on('data', (d: Buffer) => {
            out += d.toString();
            check();
          });
          child.on('exit', (code) => reject(new Error(`the watcher exited ${code}: ${out}`)));
          check();
        });
      await until(() => lines('ready') === 1);
      const before = lines('major');
      await collectGarbage(port);
      await until(() => lines('major') >= before + 1);
      await collectGarbage(port);
      await until(() => lines('major') >= before + 2);
      assert.ok(lines('major') >= before + 2, out);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('says which port did not answer', async () => {
    const port = await freePort();
    await assert.rejects(collectGarbage(port), new RegExp(`inspector on port ${port}: `));
  });
});
