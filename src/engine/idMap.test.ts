import { describe, expect, it } from "vitest";
import { IdMap } from "./idMap.js";

describe("IdMap", () => {
  it("sets, gets, replaces and deletes by id, counting what it holds", () => {
    const m = new IdMap<string>();
    expect(m.size).toBe(0);
    expect(m.set(7, "a")).toBe(m);
    m.set(3, "b");
    m.set(7, "c"); // a replacement, not a new entry
    expect(m.size).toBe(2);
    expect([m.get(7), m.get(3), m.get(4)]).toEqual(["c", "b", undefined]);
    expect([m.has(3), m.has(4)]).toEqual([true, false]);
    expect(m.delete(3)).toBe(true);
    expect(m.delete(3)).toBe(false);
    expect(m.size).toBe(1);
    expect(m.has(3)).toBe(false);
  });

  it("holds undefined as a value, as a Map does", () => {
    const m = new IdMap<undefined>();
    m.set(1, undefined);
    expect([m.has(1), m.size]).toEqual([true, 1]);
  });

  it("iterates in insertion order, as a Map does, also across compactions", () => {
    const m = new IdMap<string>();
    for (const id of [40, 2, 1_000_000, 17]) m.set(id, `r${id}`);
    expect([...m.keys()]).toEqual([40, 2, 1_000_000, 17]);
    expect([...m.values()]).toEqual(["r40", "r2", "r1000000", "r17"]);
    // Many entries come and go (compactions), a few stay: they keep their order and values.
    const ref = new Map<number, string>(m.keys().map((id) => [id, m.get(id)!]));
    for (let id = 100; id < 1_100; id++) {
      m.set(id, `r${id}`);
      ref.set(id, `r${id}`);
      if (id % 7 !== 0) {
        m.delete(id);
        ref.delete(id);
      }
    }
    m.set(2, "again");
    ref.set(2, "again");
    expect(m.keys()).toEqual([...ref.keys()]);
    expect(m.values()).toEqual([...ref.values()]);
    expect(m.size).toBe(ref.size);
    for (const [id, v] of ref) expect(m.get(id)).toBe(v);
  });

  it("keys() and values() are snapshots: a loop sees what there was when it began", () => {
    const m = new IdMap<number>();
    for (let id = 1; id <= 100; id++) m.set(id, id);
    const seen: number[] = [];
    for (const v of m.values()) {
      seen.push(v);
      if (v === 1) {
        for (let id = 2; id <= 90; id++) m.delete(id); // past the threshold: compacted now
        m.set(500, 500);
      }
    }
    expect(seen).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    expect(m.keys()).toEqual([1, 91, 92, 93, 94, 95, 96, 97, 98, 99, 100, 500]);
    expect(m.get(95)).toBe(95);
  });

  it("refuses an id that is not a non-negative integer: the key would not be an index", () => {
    const m = new IdMap<number>();
    for (const bad of [-1, 1.5, Number.NaN, 2 ** 32 - 1]) expect(() => m.set(bad, 0)).toThrow(/non-negative integer/);
    expect(m.size).toBe(0);
  });
});
