import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigNotFoundError, dataDir, findConfig, findDaemonConfig } from "./discover.js";
import { parseDuration, formatDuration } from "./duration.js";
import { envRefNames, resolveEnvRefs } from "./env.js";
import { tempProject } from "./testkit.js";

describe("findConfig (CONTRACT §1)", () => {
  const root = tempProject({ "svc.yaml": "jobs: {}\n" });
  const deep = join(root, "a", "b");
  mkdirSync(deep, { recursive: true });

  it("-c wins, then SVC_CONFIG, then the first svc.yaml upwards", () => {
    expect(findConfig({ flag: "x/svc.yaml", env: { SVC_CONFIG: "/y.yaml" }, cwd: "/w" })).toBe("/w/x/svc.yaml");
    expect(findConfig({ env: { SVC_CONFIG: "y.yaml" }, cwd: "/w" })).toBe("/w/y.yaml");
    expect(findConfig({ env: {}, cwd: deep })).toBe(join(root, "svc.yaml"));
    writeFileSync(join(root, "a", "svc.yaml"), "jobs: {}\n");
    expect(findConfig({ env: {}, cwd: deep })).toBe(join(root, "a", "svc.yaml"));
  });

  it("a clear error when there is none", () => {
    // stopAt bounds the search at the temp directory, so what tmpdir's parents hold does not matter.
    const empty = tempProject();
    const cwd = join(empty, "x", "y");
    mkdirSync(cwd, { recursive: true });
    expect(() => findConfig({ env: {}, cwd, stopAt: empty })).toThrow(ConfigNotFoundError);
    expect(() => findConfig({ env: {}, cwd, stopAt: empty })).toThrow(
      `no svc.yaml found in ${cwd} or any parent directory up to ${empty}: pass -c PATH, set SVC_CONFIG, or run where svc.yaml is`,
    );
  });

  it("stopAt is the last directory searched: a svc.yaml in it is found, one above it is not", () => {
    const above = tempProject({ "svc.yaml": "jobs: {}\n" });
    const stop = join(above, "stop");
    const cwd = join(stop, "x");
    mkdirSync(cwd, { recursive: true });
    expect(findConfig({ env: {}, cwd })).toBe(join(above, "svc.yaml"));
    expect(() => findConfig({ env: {}, cwd, stopAt: stop })).toThrow(ConfigNotFoundError);
    // A stopAt that is not on the way up does not stop the search.
    expect(findConfig({ env: {}, cwd, stopAt: join(above, "elsewhere") })).toBe(join(above, "svc.yaml"));
    writeFileSync(join(stop, "svc.yaml"), "jobs: {}\n");
    expect(findConfig({ env: {}, cwd, stopAt: stop })).toBe(join(stop, "svc.yaml"));
  });
});

describe("dataDir and findDaemonConfig", () => {
  it("data dir: --data-dir, SVC_DATA_DIR, else .svc beside svc.yaml", () => {
    expect(dataDir({ configFile: "/p/svc.yaml", flag: "d", env: { SVC_DATA_DIR: "/e" }, cwd: "/w" })).toBe("/w/d");
    expect(dataDir({ configFile: "/p/svc.yaml", env: { SVC_DATA_DIR: "/e" } })).toBe("/e");
    expect(dataDir({ configFile: "/p/svc.yaml", env: {} })).toBe("/p/.svc");
  });

  it("svcd.yaml: the flag, else beside svc.yaml when present, else null", () => {
    const dir = tempProject({ "svc.yaml": "jobs: {}\n" });
    expect(findDaemonConfig(join(dir, "svc.yaml"))).toBeNull();
    writeFileSync(join(dir, "svcd.yaml"), "");
    expect(findDaemonConfig(join(dir, "svc.yaml"))).toBe(join(dir, "svcd.yaml"));
    expect(findDaemonConfig(join(dir, "svc.yaml"), "/other/svcd.yaml")).toBe("/other/svcd.yaml");
  });
});

describe("durations", () => {
  it.each([
    ["90s", 90_000],
    ["1h30m", 5_400_000],
    ["2d", 172_800_000],
    ["250ms", 250],
    ["1.5h", 5_400_000],
    ["0s", 0],
    ["1m30s500ms", 90_500],
  ])("%s = %d ms", (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(["", "5", "5 m", "1h 30m", "-1s", "1w", "1.h", "h", "10 minutes"])("rejects %j", (text) => {
    expect(parseDuration(text)).toBeNull();
  });

  it("formats canonically and round-trips", () => {
    expect(formatDuration(5_400_000)).toBe("1h30m");
    expect(formatDuration(90_000)).toBe("1m30s");
    expect(formatDuration(0)).toBe("0s");
    for (const ms of [1, 999, 1000, 61_000, 86_400_001]) expect(parseDuration(formatDuration(ms))).toBe(ms);
  });
});

describe("resolveEnvRefs", () => {
  it("process env first, then .env; reports the first unset variable", () => {
    expect(resolveEnvRefs("https://x/${env:A}/${env:B}", { A: "1" }, { A: "no", B: "2" })).toEqual({ value: "https://x/1/2" });
    expect(resolveEnvRefs("${env:A}${env:C}", { A: "" }, {})).toEqual({ unset: "C" });
    expect(resolveEnvRefs("plain ${HOME} $env:X", {}, {})).toEqual({ value: "plain ${HOME} $env:X" });
    expect(envRefNames("${env:A} and ${env:B_2}")).toEqual(["A", "B_2"]);
  });
});
