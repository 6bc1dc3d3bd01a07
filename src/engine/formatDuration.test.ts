import { describe, expect, it } from "vitest";
import { formatDuration } from "./formatDuration.js";

describe("formatDuration", () => {
  it("writes the svc.yaml duration syntax", () => {
    expect(formatDuration(250)).toBe("250ms");
    expect(formatDuration(5_000)).toBe("5s");
    expect(formatDuration(90_000)).toBe("1m30s");
    expect(formatDuration(3_600_000)).toBe("1h");
    expect(formatDuration(2 * 86_400_000 + 1_500)).toBe("2d1s500ms");
  });
});
