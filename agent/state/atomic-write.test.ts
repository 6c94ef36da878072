import assert from 'node:assert/strict';
import { promises as fs, realpathSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ensureParents, writeAtomic } from './atomic-write';

describe('atomic write', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(realpathSync(os.tmpdir()), 'keeper-atomic-'));
  });
  afterEach(() => fs.rm(dir, { recursive: true, force: true }));

  it('replaces the file in one step and leaves no temp file behind', async () => {
    const target = path.join(dir, 'f');
    await fs.writeFile(target, 'old');
    await writeAtomic({ path: target, content: Buffer.from('new'), mode: 0o600 });
    assert.equal(await fs.readFile(target, 'utf8'), 'new');
    assert.equal((await fs.stat(target)).mode & 0o7777, 0o600);
    assert.deepEqual(await fs.readdir(dir), ['f']);
  });

  it('removes its temp file when the final rename fails', async () => {
    const target = path.join(dir, 'busy');
    await fs.mkdir(target);
    await fs.writeFile(path.join(target, 'inside'), 'x'); // a non-empty directory cannot be renamed over
    await assert.rejects(writeAtomic({ path: target, content: Buffer.from('x'), mode: 0o644 }));
    assert.deepEqual(await fs.readdir(dir), ['busy']);
  });

  it('removes its temp file when setting the mode fails', async () => {
    const target = path.join(dir, 'f');
    await assert.rejects(writeAtomic({ path: target, content: Buffer.from('x'), mode: Number.NaN }));
    assert.deepEqual(await fs.readdir(dir), []);
  });

  it('creates parents as real 0755 directories whatever the umask', async () => {
    const old = process.umask(0o077);
    try {
      const created = await ensureParents(path.join(dir, 'a', 'b', 'file'));
      assert.deepEqual(created, [path.join(dir, 'a'), path.join(dir, 'a', 'b')]);
      assert.equal((await fs.stat(path.join(dir, 'a', 'b'))).mode & 0o7777, 0o755);
    } finally {
      process.umask(old);
    }
  });

  it('refuses to create under a parent that is a file', async () => {
    await fs.writeFile(path.join(dir, 'plain'), '');
    await assert.rejects(ensureParents(path.join(dir, 'plain', 'x', 'f')), /plain exists and is not a directory/);
  });
});
