/**
 * A map from run ids to values, for the engine's long-lived maps whose entries come and go with
 * every run (`ctx.attempts`, `ctx.waiting`). The subset of Map's interface the engine uses, in
 * insertion order as a Map; keys() and values() are snapshots (arrays), so a loop over
 * them sees the entries there were when it began, whatever it deletes or adds.
 *
 * Why not a Map: V8 replaces a Map's hash table as entries come and go, and the table it replaces
 * keeps its entries and a pointer to its successor (for iterators still walking it). Once one of
 * them is in the old generation (the map lived through two scavenges, as a daemon's does), the
 * chain from it keeps every later table, and every value they ever held, alive through every
 * scavenge until a full collection: every run's Attempt (its process, pipes and line splitters with
 * it) was promoted that way (docs/perf/FIXES.md, "Every run's objects outlived the young
 * generation"; bench/mapChurn.ts). Here the entries are two arrays, compacted now and then into new
 * ones that nothing old points to, and the index from id to position is an object's integer keys
 * (its elements dictionary), whose values are small integers.
 */
export class IdMap<V> {
  /** Ids in insertion order; HOLE where one was deleted. */
  private ids: number[] = [];
  /** Values, at their id's position. */
  private vals: Array<V | undefined> = [];
  /** id -> its position in `ids` and `vals`. */
  private at: Record<number, number> = Object.create(null) as Record<number, number>;
  private holes = 0;

  get size(): number {
    return this.ids.length - this.holes;
  }

  get(id: number): V | undefined {
    const i = this.at[id];
    return i === undefined ? undefined : this.vals[i];
  }

  has(id: number): boolean {
    return this.at[id] !== undefined;
  }

  set(id: number, value: V): this {
    // An array index (below 2^32 - 1): an element of `at`, not a named property.
    if (!Number.isInteger(id) || id < 0 || id > MAX_ID) throw new RangeError(`IdMap: a run id is a non-negative integer below 2^32 - 1, got ${id}`);
    const i = this.at[id];
    if (i !== undefined) {
      this.vals[i] = value;
      return this;
    }
    this.at[id] = this.ids.length;
    this.ids.push(id);
    this.vals.push(value);
    return this;
  }

  delete(id: number): boolean {
    const i = this.at[id];
    if (i === undefined) return false;
    delete this.at[id];
    this.ids[i] = HOLE;
    this.vals[i] = undefined;
    this.holes++;
    if (this.holes > MIN_COMPACT && this.holes * 2 > this.ids.length) this.compact();
    return true;
  }

  /** The ids, in insertion order: a snapshot (as `[...map.keys()]` would be). */
  keys(): number[] {
    const out: number[] = [];
    for (const id of this.ids) if (id !== HOLE) out.push(id);
    return out;
  }

  /** The values, in insertion order: a snapshot (as `[...map.values()]` would be). */
  values(): V[] {
    const out: V[] = [];
    for (let i = 0; i < this.ids.length; i++) if (this.ids[i] !== HOLE) out.push(this.vals[i] as V);
    return out;
  }

  /** The entries into new arrays without the holes (the old ones are dropped whole). */
  private compact(): void {
    const ids: number[] = [];
    const vals: Array<V | undefined> = [];
    for (let i = 0; i < this.ids.length; i++) {
      const id = this.ids[i]!;
      if (id === HOLE) continue;
      this.at[id] = ids.length;
      ids.push(id);
      vals.push(this.vals[i]);
    }
    this.ids = ids;
    this.vals = vals;
    this.holes = 0;
  }
}

const HOLE = -1;
const MAX_ID = 2 ** 32 - 2;
/** Holes tolerated before a compaction is considered (then: when they are more than half). */
const MIN_COMPACT = 32;
