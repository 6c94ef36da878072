// A private Redis server on a free port, for tests that stop and restart the cache without
// disturbing the stack's shared instance.
import { spawn, type ChildProcess } from 'node:child_process';
import { freePort } from './ports';

export interface RedisInstance {
  addr: string;
  stop(): Promise<void>;
  start(): Promise<void>;
}

export async function startRedisInstance(password: string): Promise<RedisInstance> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--requirepass', password],
      { stdio: 'ignore' },
    );
    for (let i = 0; i < 100; i++) {
      const ok = await new Promise<boolean>((resolve) => {
        const s = require('node:net').connect(port, '127.0.0.1');
        s.once('connect', () => {
          s.destroy();
          resolve(true);
        });
        s.once('error', () => resolve(false));
      });
      if (ok) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`redis-server did not start on port ${port}`);
  };
  const stop = async () => {
    if (!child || child.exitCode !== null) return;
    const c = child;
    await new Promise<void>((resolve) => {
      c.once('exit', () => resolve());
      c.kill('SIGKILL');
    });
  };
  await start();
  return { addr: `127.0.0.1:${port}`, start, stop };
}
