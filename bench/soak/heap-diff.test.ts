import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../test/support/ports';
import { compareHeaps, indexSnapshot } from './heap-diff';
import { inspectFlag, takeHeapSnapshot } from './inspector-gc';

// A process that keeps 2,000 Leaked objects in a module-level Map at start and at each SIGUSR2, as
// an unbounded per-run cache would, and prints "ok" after each batch.
const LEAKER = `
class Leaked { constructor(i) { this.i = i; this.pad = 'x'.repeat(64) + i; } }
const held = new Map();
let n = 0;
const grow = () => { for (let k = 0; k < 2000; k++, n++) held.set(n, new Leaked(n)); console.log('ok'); };
process.on('SIGUSR2', grow);
grow();
setInterval(() => {}, 1000);
`;

describe('the heap snapshot comparison of the soak (--heap-snapshots)', () => {
  it('names the class that grew between two snapshots and the map that holds the new objects', async () => {
    const port = await freePort();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'heap-diff-'));
    const child = spawn(process.execPath, [inspectFlag(port), '-e', LEAKER], { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      let out = '';
      const waiting: (() => void)[] = [];
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        for (const w of waiting) w();
      });
      const lines = (word: string) => out.split('\n').filter((l) => l === word).length;
      const until = (cond: () => boolean) =>
        new Promise<void>((resolve, reject) => {
          const check = () => {
            if (cond()) resolve();
          };
          waiting.push(check);
          child.on('exit', (code) => reject(new Error(`the leaker exited ${code}: ${out}`)));
          check();
        });
      await until(() => lines('ok') === 1);
      await takeHeapSnapshot(port, path.join(dir, 'a.heapsnapshot'));
      child.kill('SIGUSR2');
      await until(() => lines('ok') === 2);
      await takeHeapSnapshot(port, path.join(dir, 'b.heapsnapshot'));

      const read = (f: string) => indexSnapshot(JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')));
      const growth = compareHeaps(read('a.heapsnapshot'), read('b.heapsnapshot'), 50);
      const leaked = growth.find((g) => g.class === 'Leaked');
      assert.ok(leaked, `Leaked is not among the classes that grew: ${growth.map((g) => g.class).join(', ')}`);
      // (Its prototype object bears the class's name too, hence "at least".)
      assert.ok(leaked.count_before >= 2000 && leaked.count_before < 2010, String(leaked.count_before));
      assert.equal(leaked.count_after - leaked.count_before, 2000);
      // The 2,000 more are held by the Map's backing table, which the snapshot shows as an array
      // retained by the Map: the retainer names the structure to bound.
      const top = leaked.growth_by_retainer[0]!;
      assert.equal(top.count, 2000, JSON.stringify(leaked.growth_by_retainer));
      assert.match(top.retainer, /^\(array\)|^Map\./);
    } finally {
      child.kill('SIGKILL');
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
