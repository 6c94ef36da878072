// Runs functions one at a time per key; different keys run concurrently. Used so two deliveries of
// the same step that arrive together act once: the second waits, then finds the first's record.
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<void>>();

  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const tail = prev.then(() => mine);
    this.tails.set(key, tail);
    await prev;
    try {
      return await fn();
    } finally {
      release();
      // Forget the key once nobody is queued behind us, so the map does not grow with every step.
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }

  /** Keys with a holder or waiters; for tests and diagnostics. */
  get size(): number {
    return this.tails.size;
  }
}
