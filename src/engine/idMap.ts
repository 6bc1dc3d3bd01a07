/**
 * A map from run ids to values, for the engine's long-lived maps whose entries come and go with
 * every run (`ctx.attempts`, `ctx.waiting`). The subset of Map's interface the engine uses;
 * iteration is in ascending id order (run creation order), not insertion order.
 *
 * Why not a Map: V8 replaces a Map's hash table as entries come and go, and the table it replaces
 * keeps its entries and a pointer to its successor (for iterators still walking it). Once one of
 * them is in the old generation (the map lived through two scavenges, as a daemon's map does), the
 * chain from it keeps every later table, and every value they ever held, alive through every
 * scavenge until a full collection. Every run's Attempt (its process, pipes and line splitters
 * with it) was promoted that way (docs/perf/FIXES.md, "The engine's maps of runs kept every run
 * alive until a full collection"). Integer keys of an object without a prototype live in its
 * elements dictionary, whose old tables point nowhere.
 */
const MAX_ID = 2 ** 32 - 2;

export class IdMap<V> {
  private entries: Record<number, V> = Object.create(null) as Record<number, V>;
  private count = 0;

  get size(): number {
    return this.count;
  }

  get(id: number): V | undefined {
    return this.entries[id];
  }

  has(id: number): boolean {
    return id in this.entries;
  }

  set(id: number, value: V): this {
    // An array index (below 2^32 - 1), so that it is an element of the object, not a named property.
    if (!Number.isInteger(id) || id < 0 || id > MAX_ID) throw new RangeError(`IdMap: a run id is a non-negative integer below 2^32 - 1, got ${id}`);
    if (!(id in this.entries)) this.count++;
    this.entries[id] = value;
    return this;
  }

  delete(id: number): boolean {
    if (!(id in this.entries)) return false;
    delete this.entries[id];
    this.count--;
    return true;
  }

  clear(): void {
    this.entries = Object.create(null) as Record<number, V>;
    this.count = 0;
  }

  *keys(): IterableIterator<number> {
    for (const k in this.entries) yield Number(k);
  }

  *values(): IterableIterator<V> {
    for (const k in this.entries) yield this.entries[k as unknown as number]!;
  }

  *[Symbol.iterator](): IterableIterator<[number, V]> {
    for (const k in this.entries) yield [Number(k), this.entries[k as unknown as number]!];
  }
}
