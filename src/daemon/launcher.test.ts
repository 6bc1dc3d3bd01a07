import { describe, expect, it } from "vitest";
import { dropLauncherEnv, launcherEnv, LAUNCHER_MARK } from "./launcher.js";

describe("launcher environment", () => {
  it("adds one malloc arena and names what it added; the daemon takes exactly that out again", () => {
    const user = { PATH: "/bin", HOME: "/root" };
    const launched = launcherEnv(user);
    expect(launched).toEqual({ PATH: "/bin", HOME: "/root", MALLOC_ARENA_MAX: "1", [LAUNCHER_MARK]: "MALLOC_ARENA_MAX" });
    expect(user).toEqual({ PATH: "/bin", HOME: "/root" }); // not changed in place
    dropLauncherEnv(launched);
    expect(launched).toEqual(user);
  });

  it("keeps a MALLOC_ARENA_MAX of the user's own, even an empty one, and then adds no mark", () => {
    for (const v of ["4", ""]) {
      const launched = launcherEnv({ MALLOC_ARENA_MAX: v });
      expect(launched).toEqual({ MALLOC_ARENA_MAX: v });
      dropLauncherEnv(launched);
      expect(launched).toEqual({ MALLOC_ARENA_MAX: v });
    }
  });

  it("drops only the variables it knows, whatever the mark names", () => {
    const env = { MALLOC_ARENA_MAX: "1", PATH: "/bin", [LAUNCHER_MARK]: "MALLOC_ARENA_MAX,PATH" };
    dropLauncherEnv(env);
    expect(env).toEqual({ PATH: "/bin" });
  });
});
