import { describe, expect, it } from "vitest";
import { EngineError } from "../../src/engine/errors.js";
import { engineKits } from "../helpers/engineKit.js";

const startKit = engineKits("svc-pause-");

const yaml = `
jobs:
  a:
    command: "echo a"
    tags: [etl]
  b:
    command: "echo b"
    frequency: "after:a"
    tags: [etl, nightly]
  c:
    command: "echo c"
    tags: [other]
`;

const kit = (dir?: string) => startKit(yaml, { dir });

describe("pause and resume", () => {
  it("a paused job is not dependency-triggered, but can still be run by hand", async () => {
    const k = await kit();
    k.engine.pause("b");
    const a = k.engine.runNow("a", { triggeredBy: "cli" });
    await k.waitRun(a.id, ["SUCCESS"]);
    await new Promise((r) => setTimeout(r, 200));
    expect(k.runsOf("b")).toEqual([]);
    const manual = k.engine.runNow("b", { triggeredBy: "cli" });
    expect((await k.waitRun(manual.id, ["SUCCESS"])).trigger).toBe("manual");
  });

  it("pauses and resumes every job with a tag, and names unknown tags", async () => {
    const k = await kit();
    expect(k.engine.pauseTag("etl")).toEqual(["a", "b"]);
    expect(k.store.jobState.get("a")!.paused).toBe(1);
    expect(k.store.jobState.get("b")!.paused).toBe(1);
    expect(k.store.jobState.get("c")?.paused ?? 0).toBe(0);
    expect(k.engine.resumeTag("nightly")).toEqual(["b"]);
    expect(k.store.jobState.get("b")!.paused).toBe(0);
    expect(() => k.engine.pauseTag("nope")).toThrow(EngineError);
    expect(() => k.engine.pause("zzz")).toThrow(/unknown job/);
  });

  it("keeps the pause across a restart", async () => {
    const first = await kit();
    first.engine.pause("c");
    await startKit.stop(first);
    const second = await kit(first.dir);
    expect(second.store.jobState.get("c")!.paused).toBe(1);
  });
});
