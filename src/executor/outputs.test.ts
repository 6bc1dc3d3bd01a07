import { describe, expect, it } from "vitest";
import type { OutputMode } from "../config/types.js";
import { checkOutputMode, createOutputCapture } from "./outputs.js";

function capture(spec: Record<string, OutputMode>, lines: string[], exitCode: number | null = 0) {
  const c = createOutputCapture(spec);
  for (const l of lines) c.feed(l);
  return c.finish(exitCode);
}

describe("createOutputCapture", () => {
  it("last_line skips trailing empty and whitespace-only lines; value untrimmed", () => {
    expect(capture({ v: { kind: "last_line" } }, ["a", " b ", "", "   ", ""])).toEqual({ v: " b " });
  });

  it("first_line takes the first non-empty line", () => {
    expect(capture({ v: { kind: "first_line" } }, ["", "  ", "first", "second"])).toEqual({ v: "first" });
  });

  it("line modes are absent when stdout is empty or blank", () => {
    const spec = { f: { kind: "first_line" }, l: { kind: "last_line" } } as const;
    expect(capture(spec, [])).toEqual({});
    expect(capture(spec, ["", " "])).toEqual({});
  });

  it("json_field reads the last line that parses as a JSON object", () => {
    const lines = ['{"rows": 1}', "log line", '{"rows": 2, "name": "x"}', "[1,2]", '"str"', "42", "{broken", "done"];
    expect(capture({ rows: { kind: "json_field", key: "rows" }, name: { kind: "json_field", key: "name" } }, lines)).toEqual({
      rows: "2",
      name: "x",
    });
  });

  it("json_field follows dotted keys, indexes arrays, stringifies non-strings", () => {
    const line = JSON.stringify({ a: { b: { c: "deep" }, n: null, t: true, o: { x: 1 } }, list: [{ id: 7 }], "k.dot": "lit" });
    const spec: Record<string, OutputMode> = {
      deep: { kind: "json_field", key: "a.b.c" },
      nul: { kind: "json_field", key: "a.n" },
      bool: { kind: "json_field", key: "a.t" },
      obj: { kind: "json_field", key: "a.o" },
      idx: { kind: "json_field", key: "list.0.id" },
      literal: { kind: "json_field", key: "k.dot" },
      missing: { kind: "json_field", key: "a.b.zzz" },
      through: { kind: "json_field", key: "a.b.c.d" },
    };
    expect(capture(spec, ["  " + line + "  "])).toEqual({
      deep: "deep",
      nul: "null",
      bool: "true",
      obj: '{"x":1}',
      idx: "7",
      literal: "lit",
    });
  });

  it("json_field is absent when the last JSON object lacks the key (no fallback to earlier lines)", () => {
    expect(capture({ v: { kind: "json_field", key: "a" } }, ['{"a": 1}', '{"b": 2}'])).toEqual({});
    expect(capture({ v: { kind: "json_field", key: "a" } }, ["no json at all"])).toEqual({});
  });

  it("json_field does not walk the prototype", () => {
    expect(capture({ v: { kind: "json_field", key: "toString" } }, ["{}"])).toEqual({});
    expect(capture({ v: { kind: "json_field", key: "a.constructor" } }, ['{"a":{}}'])).toEqual({});
  });

  it("regex takes the first match's first group, or the whole match without groups", () => {
    const lines = ["nothing", "rows=12 more", "rows=99"];
    expect(capture({ g: { kind: "regex", pattern: "rows=(\\d+)" }, w: { kind: "regex", pattern: "\\d+" } }, lines)).toEqual({
      g: "12",
      w: "12",
    });
  });

  it("regex matches per line: ^ and $ anchor to a line; a non-participating group gives an empty string", () => {
    expect(capture({ v: { kind: "regex", pattern: "^b$" } }, ["a", "b", "c"])).toEqual({ v: "b" });
    expect(capture({ v: { kind: "regex", pattern: "a\\nb" } }, ["a", "b"])).toEqual({});
    expect(capture({ v: { kind: "regex", pattern: "x(y)?" } }, ["x"])).toEqual({ v: "" });
  });

  it("regex with no match is absent", () => {
    expect(capture({ v: { kind: "regex", pattern: "nope" } }, ["a", "b"])).toEqual({});
  });

  it("exit_code is the code as text, absent when a signal ended the process", () => {
    expect(capture({ c: { kind: "exit_code" } }, [], 3)).toEqual({ c: "3" });
    expect(capture({ c: { kind: "exit_code" } }, [], 0)).toEqual({ c: "0" });
    expect(capture({ c: { kind: "exit_code" } }, [], null)).toEqual({});
  });

  it("an empty spec captures nothing", () => {
    expect(capture({}, ["a"])).toEqual({});
  });

  it("rejects an invalid regex naming the variable", () => {
    expect(checkOutputMode({ kind: "regex", pattern: "(" })).toMatch(/invalid regex/);
    expect(checkOutputMode({ kind: "last_line" })).toBeNull();
    expect(() => createOutputCapture({ bad: { kind: "regex", pattern: "[" } })).toThrow(/output bad: invalid regex/);
  });

  it("keeps memory bounded over a million lines", () => {
    const c = createOutputCapture({
      l: { kind: "last_line" },
      j: { kind: "json_field", key: "i" },
      r: { kind: "regex", pattern: "never-(here)" },
    });
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < 1_000_000; i++) c.feed(i % 1000 === 0 ? `{"i": ${i}}` : `line ${i} ${"x".repeat(80)}`);
    const grown = process.memoryUsage().heapUsed - before;
    expect(c.finish(0)).toEqual({ l: `line 999999 ${"x".repeat(80)}`, j: "999000" });
    expect(grown).toBeLessThan(50 * 1024 * 1024);
  });
});
