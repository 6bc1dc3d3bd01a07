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

  it("iterates in ascending id order, whatever the order of insertion", () => {
    const m = new IdMap<string>();
    for (const id of [40, 2, 1_000_000, 17]) m.set(id, `r${id}`);
    expect([...m.keys()]).toEqual([2, 17, 40, 1_000_000]);
    expect([...m.values()]).toEqual(["r2", "r17", "r40", "r1000000"]);
    expect([...m]).toEqual([
      [2, "r2"],
      [17, "r17"],
      [40, "r40"],
      [1_000_000, "r1000000"],
    ]);
  });

  it("an entry deleted during an iteration is not visited after", () => {
    const m = new IdMap<number>();
    for (let id = 1; id <= 5; id++) m.set(id, id);
    const seen: number[] = [];
    for (const v of m.values()) {
      seen.push(v);
      if (v === 2) m.delete(4);
    }
    expect(seen).toEqual([1, 2, 3, 5]);
  });

  it("clear() empties it", () => {
    const m = new IdMap<number>();
    m.set(1, 1).set(2, 2);
    m.clear();
    expect([m.size, [...m.keys()], m.has(1)]).toEqual([0, [], false]);
  });

  it("refuses an id that is not a non-negative integer: the key would not be an index", () => {
    const m = new IdMap<number>();
    for (const bad of [-1, 1.5, Number.NaN, 2 ** 32 - 1]) expect(() => m.set(bad, 0)).toThrow(/non-negative integer/);
    expect(m.size).toBe(0);
  });
});
