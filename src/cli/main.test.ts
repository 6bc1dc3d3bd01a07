/** The did-you-mean of an unknown command never offers a command that stops things. */
import { afterEach, describe, expect, it } from "vitest";
import { main, RISKY_COMMANDS, withoutRiskySuggestion } from "./main.js";

function capture() {
  let out = "";
  let err = "";
  return { output: { out: (s: string) => void (out += s), err: (s: string) => void (err += s) }, text: () => ({ out, err }) };
}

afterEach(() => {
  process.exitCode = undefined; // main() sets it, as bin/svc.js needs
});

describe("withoutRiskySuggestion", () => {
  it("drops stop, restart, cancel, skip, pause from commander's suggestion, keeps the others", () => {
    expect(withoutRiskySuggestion("unknown command 'stp' (Did you mean stop?)")).toBe("unknown command 'stp'");
    expect(withoutRiskySuggestion("unknown command 'sho' (Did you mean show?)")).toBe("unknown command 'sho' (Did you mean show?)");
    expect(withoutRiskySuggestion("unknown command 'x' (Did you mean one of stop, status?)")).toBe("unknown command 'x' (Did you mean status?)");
    expect(withoutRiskySuggestion("unknown command 'x' (Did you mean one of show, status?)")).toBe("unknown command 'x' (Did you mean one of show, status?)");
    for (const c of ["stop", "restart", "cancel", "skip", "pause"]) expect(RISKY_COMMANDS.has(c)).toBe(true);
  });

  it("through main(): every near-miss of a risky command is answered without it (exit 2)", async () => {
    for (const typo of ["stp", "sop", "stopp", "restrat", "cancle", "skp", "puase"]) {
      const c = capture();
      expect(await main([typo], { output: c.output, env: {}, cwd: "/" })).toBe(2);
      const { err } = c.text();
      expect(err, typo).toMatch(/^svc: unknown command/);
      for (const risky of RISKY_COMMANDS) expect(err, typo).not.toMatch(new RegExp(`Did you mean.*\\b${risky}\\b`));
    }
    const c = capture();
    await main(["shw"], { output: c.output, env: {}, cwd: "/" });
    expect(c.text().err).toContain("(Did you mean show?)");
  });
});
