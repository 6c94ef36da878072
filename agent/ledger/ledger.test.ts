import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Ledger, type LedgerEntry } from './ledger';

const entry = (over: Partial<LedgerEntry> = {}): LedgerEntry => ({
  host: 'web1.example.org',
  module: 'core.file.present',
  changed: true,
  ok: true,
  output: 'created /etc/x (mode 0644)',
  started_at: '2025-01-01T00:00:00.000Z',
  finished_at: '2025-01-01T00:00:01.000Z',
  ...over,
});

describe('ledger', () => {
  let dir: string;
  let ledger: Ledger | undefined;
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'keeper-ledger-'));
  });
  afterEach(async () => {
    await ledger?.close();
    ledger = undefined;
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('records durably and reads back after a restart', async () => {
    ledger = await Ledger.open(dir);
    await ledger.record('apply-1', 1, entry({ output: 'second' }));
    await ledger.record('apply-1', 0, entry({ output: 'first' }));
    await ledger.close();

    ledger = await Ledger.open(dir);
    assert.equal((await ledger.get('apply-1', 0))?.output, 'first');
    assert.deepEqual(
      (await ledger.list('apply-1')).map((r) => [r.index, r.output]),
      [
        [0, 'first'],
        [1, 'second'],
      ],
    );
    assert.equal(await ledger.get('apply-1', 2), undefined);
    assert.deepEqual(await ledger.list('apply-unknown'), []);
    const lines = (await fs.readFile(path.join(dir, 'apply-1.jsonl'), 'utf8')).trim().split('\n');
    assert.deepEqual(JSON.parse(lines[0]!), { apply_id: 'apply-1', index: 1, ...entry({ output: 'second' }) });
  });

  it('keeps the first result of a step; a second record does not overwrite it', async () => {
    ledger = await Ledger.open(dir);
    await ledger.record('a', 0, entry({ output: 'one' }));
    const again = await ledger.record('a', 0, entry({ output: 'two' }));
    assert.equal(again.output, 'one');
    assert.equal((await fs.readFile(path.join(dir, 'a.jsonl'), 'utf8')).trim().split('\n').length, 1);
  });

  it('ignores a torn last line after a crash and keeps appending cleanly', async () => {
    ledger = await Ledger.open(dir);
    await ledger.record('a', 0, entry({ output: 'kept' }));
    await ledger.close();
    await fs.appendFile(path.join(dir, 'a.jsonl'), '{"apply_id":"a","index":1,"host":"web1","chan'); // torn write

    const warnings: string[] = [];
    ledger = await Ledger.open(dir, { warn: (m) => warnings.push(m) });
    assert.deepEqual(
      (await ledger.list('a')).map((r) => r.output),
      ['kept'],
    );
    assert.match(warnings[0] ?? '', /skipped 1 unreadable line/);
    await ledger.record('a', 1, entry({ output: 'after crash' }));
    await ledger.close();

    ledger = await Ledger.open(dir);
    assert.deepEqual(
      (await ledger.list('a')).map((r) => r.output),
      ['kept', 'after crash'],
    );
  });

  it('refuses apply ids and indexes that could escape the directory or make no sense', async () => {
    ledger = await Ledger.open(dir);
    for (const bad of ['../x', '..', '.lock', 'a/b', '', 'a b', 'x'.repeat(201)]) {
      await assert.rejects(ledger.record(bad, 0, entry()), /apply_id .* is not valid/);
      await assert.rejects(ledger.get(bad, 0), /is not valid/);
    }
    for (const bad of [-1, 1.5, Number.NaN]) await assert.rejects(ledger.get('a', bad), /step index .* is not valid/);
    assert.deepEqual((await fs.readdir(dir)).sort(), ['.lock']);
  });

  it('prunes journals older than N days and keeps recent ones', async () => {
    const now = new Date('2025-03-10T00:00:00Z');
    ledger = await Ledger.open(dir, { now: () => now });
    await ledger.record('old', 0, entry());
    await ledger.record('new', 0, entry());
    const tenDaysAgo = new Date(now.getTime() - 10 * 86_400_000);
    await fs.utimes(path.join(dir, 'old.jsonl'), tenDaysAgo, tenDaysAgo);
    assert.deepEqual(await ledger.prune(7), ['old']);
    assert.equal(await ledger.get('old', 0), undefined);
    assert.ok(await ledger.get('new', 0));
    assert.deepEqual((await fs.readdir(dir)).sort(), ['.lock', 'new.jsonl']);
  });

  it('holds at most cacheApplies applies in memory; an evicted apply is read back from its journal', async () => {
    ledger = await Ledger.open(dir, { cacheApplies: 3 });
    for (let i = 0; i < 20; i++) {
      await ledger.record(`run-${i}`, 0, entry({ output: `out ${i}` }));
      await ledger.record(`run-${i}`, 1, entry({ output: `second ${i}` }));
      assert.ok(
        ledger.cacheUsage().applies <= 3,
        `after ${i + 1} applies the cache holds ${ledger.cacheUsage().applies}`,
      );
    }
    assert.equal(ledger.cacheUsage().applies, 3);
    // A redelivery of the first apply's step gets its recorded answer, and a second record does not
    // act again: the journal is the ledger, the cache only a window on it.
    assert.equal((await ledger.get('run-0', 1))?.output, 'second 0');
    const again = await ledger.record('run-0', 0, entry({ output: 'applied twice' }));
    assert.equal(again.output, 'out 0');
    assert.equal((await fs.readFile(path.join(dir, 'run-0.jsonl'), 'utf8')).trim().split('\n').length, 2);
    assert.equal(ledger.cacheUsage().applies, 3);
  });

  it('holds at most cacheBytes of journal lines in memory (the apply used last is kept whole)', async () => {
    const big = 'x'.repeat(10_000);
    ledger = await Ledger.open(dir, { cacheBytes: 25_000 });
    for (let i = 0; i < 10; i++) await ledger.record(`big-${i}`, 0, entry({ output: big }));
    const { applies, bytes } = ledger.cacheUsage();
    assert.ok(bytes <= 25_000, `the cache holds ${bytes} bytes`);
    assert.equal(applies, 2);
    assert.equal((await ledger.get('big-0', 0))?.output, big);
    await ledger.record('huge', 0, entry({ output: 'y'.repeat(40_000) }));
    assert.equal(ledger.cacheUsage().applies, 1, 'only the apply used last');
    assert.equal((await ledger.get('huge', 0))?.output.length, 40_000);
  });

  it('answers every step exactly once while concurrent deliveries of many applies evict each other', async () => {
    ledger = await Ledger.open(dir, { cacheApplies: 2 });
    const l = ledger;
    // Each step is recorded by two racing deliveries, mixed with reads of other applies that keep
    // the cache churning; every pair must agree on the first record, and each journal holds one line per step.
    await Promise.all(
      Array.from({ length: 12 }, (_, a) =>
        Array.from({ length: 4 }, async (_, i) => {
          const [x, y] = await Promise.all([
            l.record(`c-${a}`, i, entry({ output: `first ${a}.${i}` })),
            l.get(`c-${(a + 5) % 12}`, i).then(() => l.record(`c-${a}`, i, entry({ output: `second ${a}.${i}` }))),
          ]);
          assert.equal(x.output, y.output);
        }),
      ).flat(),
    );
    for (let a = 0; a < 12; a++) {
      const lines = (await fs.readFile(path.join(dir, `c-${a}.jsonl`), 'utf8')).trim().split('\n');
      assert.equal(lines.length, 4, `apply c-${a}`);
      assert.deepEqual(
        (await l.list(`c-${a}`)).map((r) => r.index),
        [0, 1, 2, 3],
      );
    }
    assert.ok(l.cacheUsage().applies <= 2);
  });

  it('a read of an evicted apply while its step is being written still sees the step', async () => {
    ledger = await Ledger.open(dir, { cacheApplies: 1 });
    for (let k = 0; k < 20; k++) {
      const writing = ledger.record(`w-${k}`, 0, entry({ output: `step ${k}` }));
      await ledger.get(`other-${k}`, 0); // evicts w-k while its line is written
      await ledger.get(`w-${k}`, 1); // reads w-k back: must wait for the write in flight
      await writing;
      assert.equal(
        (await ledger.get(`w-${k}`, 0))?.output,
        `step ${k}`,
        `apply w-${k}: a redelivery would apply the step again`,
      );
    }
  });

  it('lets one soul own the directory: a second open fails clearly until the first closes', async () => {
    ledger = await Ledger.open(dir);
    await assert.rejects(
      Ledger.open(dir),
      /ledger directory .* is in use by this process .*one soul process owns its ledger/,
    );
    await ledger.close();
    ledger = await Ledger.open(dir);
  });

  it('refuses a lock held by another live process, takes over one left by a dead process', async () => {
    await fs.writeFile(path.join(dir, '.lock'), `${process.ppid}\n`); // our parent is alive
    await assert.rejects(Ledger.open(dir), new RegExp(`in use by soul pid ${process.ppid}`));

    const gone = spawnSync(process.execPath, ['-e', '']).pid; // has exited by now
    await fs.writeFile(path.join(dir, '.lock'), `${gone}\n`);
    ledger = await Ledger.open(dir);
    assert.equal((await fs.readFile(path.join(dir, '.lock'), 'utf8')).trim(), String(process.pid));
  });
});
