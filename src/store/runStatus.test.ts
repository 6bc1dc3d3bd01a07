import { describe, expect, it } from "vitest";
import { assertTransition, canTransition, isActive, isTerminal, TransitionError } from "./runStatus.js";
import { RUN_STATUSES } from "./types.js";

describe("run status transitions", () => {
  it("allows the transitions of SPEC's table", () => {
    expect(canTransition("PENDING", "RUNNING")).toBe(true);
    expect(canTransition("RUNNING", "SUCCESS")).toBe(true);
    expect(canTransition("RUNNING", "FAILED")).toBe(true);
    expect(canTransition("FAILED", "RETRYING")).toBe(true);
    expect(canTransition("FAILED", "SKIPPED")).toBe(true);
    expect(canTransition("RETRYING", "RUNNING")).toBe(true);
    expect(canTransition("PENDING", "SKIPPED")).toBe(true);
  });

  it("never leaves SUCCESS or SKIPPED", () => {
    for (const to of RUN_STATUSES) {
      expect(canTransition("SUCCESS", to)).toBe(false);
      expect(canTransition("SKIPPED", to)).toBe(false);
    }
  });

  it("rejects a skip of a running run with a typed error", () => {
    expect(() => assertTransition(7, "RUNNING", "SKIPPED")).toThrow(TransitionError);
    expect(() => assertTransition(7, "RUNNING", "SKIPPED")).toThrow("run 7: transition RUNNING -> SKIPPED");
  });

  it("classifies terminal and active states", () => {
    expect(RUN_STATUSES.filter(isTerminal)).toEqual(["SUCCESS", "FAILED", "SKIPPED"]);
    expect(RUN_STATUSES.filter(isActive)).toEqual(["RUNNING", "RETRYING"]);
  });
});
