// A counting semaphore: at most `max` SSH connections open at once per keeper (config
// `ssh.max_sessions`), so a run over many hosts cannot open hundreds of sessions on two cores.
export class Slots {
  private used = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(private readonly max: number) {}

  /** Resolves with a release function once a slot is free (released at most once). */
  async take(signal?: AbortSignal): Promise<() => void> {
    while (this.used >= this.max) {
      if (signal?.aborted) {
        // A wake-up this waiter took is handed on, so no other waiter is left asleep beside a free slot.
        if (this.used < this.max) this.waiting.shift()?.();
        throw new Error('cancelled while waiting for an SSH session slot');
      }
      await new Promise<void>((resolve) => {
        this.waiting.push(resolve);
        signal?.addEventListener('abort', () => resolve(), { once: true });
      });
    }
    this.used++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.used--;
      this.waiting.shift()?.();
    };
  }
}
