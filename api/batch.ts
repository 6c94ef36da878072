// Coalesces the point reads of concurrent requests into one statement. A read joins the batch that
// is still being collected and is sent on the next turn of the event loop (setImmediate, i.e. after
// the I/O poll that delivered the requests); a batch already sent is never joined. So every read is
// answered by a statement that started after its request arrived, the same consistency as one query
// per request, with one round trip for all the requests of one event-loop turn.
export class TickBatcher<K, V> {
  private batch: Map<K, { resolve(v: V | undefined): void; reject(err: unknown): void }[]> | undefined;

  constructor(private readonly fetch: (keys: K[]) => Promise<Map<K, V>>) {}

  get(key: K): Promise<V | undefined> {
    return new Promise((resolve, reject) => {
      if (this.batch === undefined) {
        this.batch = new Map();
        setImmediate(() => this.flush());
      }
      const waiters = this.batch.get(key);
      if (waiters) waiters.push({ resolve, reject });
      else this.batch.set(key, [{ resolve, reject }]);
    });
  }

  private flush(): void {
    const batch = this.batch!;
    this.batch = undefined;
    let pending: Promise<Map<K, V>>;
    try {
      pending = this.fetch([...batch.keys()]);
    } catch (err) {
      pending = Promise.reject(err);
    }
    pending.then(
      (found) => {
        for (const [key, waiters] of batch) for (const w of waiters) w.resolve(found.get(key));
      },
      (err: unknown) => {
        for (const waiters of batch.values()) for (const w of waiters) w.reject(err);
      },
    );
  }
}
