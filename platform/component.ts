// A part of the keeper process with a lifecycle (a listener, a worker, a reconciler). The process
// starts them in order and stops them in reverse, so SIGTERM drains the front doors first.
export interface Component {
  name: string;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export async function startAll(components: Component[]): Promise<() => Promise<void>> {
  const started: Component[] = [];
  try {
    for (const c of components) {
      await c.start();
      started.push(c);
    }
  } catch (err) {
    await stopAll(started);
    throw err;
  }
  return () => stopAll(started);
}

async function stopAll(started: Component[]): Promise<void> {
  for (const c of [...started].reverse()) {
    await c.stop().catch(() => undefined);
  }
}
