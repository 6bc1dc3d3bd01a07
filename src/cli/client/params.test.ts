import { describe, expect, it } from "vitest";
import { convert } from "./params.js";

describe("-p values to the declared type", () => {
  it("a number in decimal notation converts; hex, binary, octal and other text go as text (the daemon says what is wrong)", () => {
    const number = { type: "number" } as const;
    expect(["0.75", "-2.5", ".5", "1e3", " 42 ", "+7"].map((t) => convert(t, number))).toEqual([0.75, -2.5, 0.5, 1000, 42, 7]);
    for (const t of ["0x10", "0b11", "0o7", "", " ", "NaN", "Infinity", "1_000", "ten"]) expect(convert(t, number), t).toBe(t);
  });

  it("integers, booleans and strings", () => {
    expect(convert("25", { type: "integer" })).toBe(25);
    expect(convert("0x10", { type: "integer" })).toBe("0x10");
    expect(convert("true", { type: "boolean" })).toBe(true);
    expect(convert("yes", { type: "boolean" })).toBe("yes");
    expect(convert("0x10", { type: "string" })).toBe("0x10");
  });
});
