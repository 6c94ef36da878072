// A counting semaphore: at most `max` SSH connections open at once per keeper (config
// `ssh.max_sessions`), so a run over many hosts cannot open hundreds of sessions on two cores.
export class Slots {
  private used = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(private readonly max: number) {}

  /** Resolves with a release function once a slot is free (released at most once). */
  async take(signal?: AbortSignal): Promise<() => void> {
    while (this.used >= this.max) {
      if (signal?.aborted) throw new Error('cancelled while waiting for an SSH session slot');
      await new Promise<void>((resolve) => {
        const wake = () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        };
        // A cancelled waiter leaves the queue, so a release never wakes a waiter that is gone.
        const onAbort = () => {
          const i = this.waiting.indexOf(wake);
          if (i >= 0) this.waiting.splice(i, 1);
          resolve();
        };
        this.waiting.push(wake);
        signal?.addEventListener('abort', onAbort, { once: true });
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
