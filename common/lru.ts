// A map of at most `max` entries that forgets the least recently used one first: the rule for a
// cache in a process that runs for months (issue 36). A cache keyed by something that keeps
// coming (a commit, an expression, a path) must not grow with every new key; a miss only costs
// the work the cache saves.
export class LruMap<K, V> {
  private readonly entries = new Map<K, V>();

  constructor(readonly max: number) {
    if (!Number.isSafeInteger(max) || max < 1) throw new RangeError(`an LRU map needs max >= 1, got ${max}`);
  }

  /** The value of `key`, marked as used last. */
  get(key: K): V | undefined {
    if (!this.entries.has(key)) return undefined;
    const v = this.entries.get(key)!;
    this.entries.delete(key);
    this.entries.set(key, v);
    return v;
  }

  has(key: K): boolean {
    return this.entries.has(key);
  }

  set(key: K, value: V): this {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value as K);
    return this;
  }

  delete(key: K): boolean {
    return this.entries.delete(key);
  }

  get size(): number {
    return this.entries.size;
  }
}
