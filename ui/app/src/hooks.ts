// The two behaviours every view shares: polling a resource (live tables), and running an action
// with visible progress and the keeper's error message.
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

export interface Polled<T> {
  data: T | undefined;
  error: unknown;
  updatedAt: Date | undefined;
  refresh(): void;
}

/** Loads now and every `intervalMs`; never overlaps two loads; stops when the view goes away. */
export function usePoll<T>(load: () => Promise<T>, intervalMs: number, deps: unknown[] = []): Polled<T> {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<unknown>();
  const [updatedAt, setUpdatedAt] = useState<Date>();
  const [tick, setTick] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;
  useEffect(() => {
    let alive = true;
    let timer: number | undefined;
    const run = async () => {
      try {
        const d = await loadRef.current();
        if (!alive) return;
        setData(d);
        setError(undefined);
        setUpdatedAt(new Date());
      } catch (err) {
        if (alive) setError(err);
      }
      if (alive) timer = window.setTimeout(run, intervalMs);
    };
    void run();
    return () => {
      alive = false;
      window.clearTimeout(timer);
    };
  }, [intervalMs, tick, ...deps]);
  return { data, error, updatedAt, refresh: useCallback(() => setTick((t) => t + 1), []) };
}

export interface Action {
  busy: boolean;
  error: unknown;
  run<T>(fn: () => Promise<T>): Promise<T | undefined>;
  clear(): void;
}

/** One action at a time: `busy` while it runs, the error it ended with (cleared on the next run). */
export function useAction(): Action {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const run = useCallback(async <T>(fn: () => Promise<T>): Promise<T | undefined> => {
    setBusy(true);
    setError(undefined);
    try {
      return await fn();
    } catch (err) {
      setError(err);
      return undefined;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run, clear: useCallback(() => setError(undefined), []) };
}

export interface Pager {
  cursor: string | undefined;
  page: number;
  next(cursor: string): void;
  previous(): void;
  reset(): void;
}

/**
 * Keyset paging over the API's cursors: the cursors of the pages walked so far are kept, so
 * "previous" returns to the exact page it came from. A change of filter starts again at page 1.
 */
export function usePager(): Pager {
  const [stack, setStack] = useState<string[]>([]);
  return {
    cursor: stack[stack.length - 1],
    page: stack.length + 1,
    next: useCallback((c: string) => setStack((s) => [...s, c]), []),
    previous: useCallback(() => setStack((s) => s.slice(0, -1)), []),
    reset: useCallback(() => setStack([]), []),
  };
}
