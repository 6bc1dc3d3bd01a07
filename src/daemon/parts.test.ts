import { describe, expect, it } from "vitest";
import type { Logger } from "../shared/logger.js";
import { Parts, startGroup } from "./parts.js";

function recorder() {
  const errors: { part: string; message: string }[] = [];
  const log = { error: (o: { err: Error; part: string }) => errors.push({ part: o.part, message: o.err.message }) } as unknown as Logger;
  return { errors, log: () => log };
}

describe("Parts", () => {
  it("undoes last first; a failing undo is logged with its part and the others still run", async () => {
    const { errors, log } = recorder();
    const parts = new Parts(log);
    const done: string[] = [];
    parts.add("a", () => done.push("a"));
    parts.add("nothing", null);
    parts.add("b", () => {
      throw new Error("b broke");
    });
    parts.add("c", async () => {
      await new Promise((r) => setTimeout(r, 5));
      done.push("c");
    });
    await parts.undo();
    expect(done).toEqual(["c", "a"]);
    expect(errors).toEqual([{ part: "b", message: "b broke" }]);
  });

  it("a second undo while the first runs waits for it, and each undo runs once", async () => {
    const parts = new Parts(recorder().log);
    let runs = 0;
    parts.add("slow", async () => {
      runs++;
      await new Promise((r) => setTimeout(r, 10));
    });
    const first = parts.undo();
    const second = parts.undo();
    await Promise.all([first, second]);
    expect(runs).toBe(1);
  });

  it("undo with nothing started does not stop a later undo from running parts added since", async () => {
    const parts = new Parts(recorder().log);
    await parts.undo();
    const done: string[] = [];
    parts.add("late", () => done.push("late"));
    await parts.undo();
    expect(done).toEqual(["late"]);
  });
});

describe("startGroup", () => {
  it("a throwing start undoes the sub-parts it started, last first, and the error goes on", async () => {
    const done: string[] = [];
    const failing = startGroup(recorder().log, (parts) => {
      parts.add("one", () => done.push("one"));
      parts.add("two", () => done.push("two"));
      throw new Error("three failed");
    });
    await expect(failing).rejects.toThrow("three failed");
    expect(done).toEqual(["two", "one"]);
  });

  it("a started group returns what it made and one undo for all its sub-parts", async () => {
    const done: string[] = [];
    const g = await startGroup(recorder().log, (parts) => {
      parts.add("one", () => done.push("one"));
      parts.add("two", () => done.push("two"));
      return { value: 42 };
    });
    expect(g.value).toBe(42);
    expect(done).toEqual([]);
    await g.undo();
    expect(done).toEqual(["two", "one"]);
  });
});
