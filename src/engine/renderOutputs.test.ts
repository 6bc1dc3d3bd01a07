import { execFileSync } from "node:child_process";
import { mkdtempSync, existsSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { findOutputRefs, OutputValues, outputEnvName, renderLiteral, renderShell } from "./renderOutputs.js";

const dir = mkdtempSync(join(tmpdir(), "svc-render-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs a rendered command through a real /bin/sh with the SVC_OUTPUT_* env. */
function sh(command: string, values: Record<string, [string, string, string]>): string {
  const v = new OutputValues();
  const env: Record<string, string> = { PATH: process.env.PATH ?? "/usr/bin:/bin" };
  for (const [job, varName, value] of Object.values(values)) {
    v.set(job, varName, value);
    env[outputEnvName(job, varName)] = value;
  }
  return execFileSync("/bin/sh", ["-c", renderShell(command, v)], { cwd: dir, env, encoding: "utf8" });
}

describe("findOutputRefs", () => {
  it("finds job and var, with dotted job names and optional spaces", () => {
    expect(findOutputRefs("x {{ outputs.extract.rows }} {{outputs.a.b.c}}")).toEqual([
      { job: "extract", varName: "rows", text: "{{ outputs.extract.rows }}" },
      { job: "a.b", varName: "c", text: "{{outputs.a.b.c}}" },
    ]);
    expect(findOutputRefs("{{ job.name }} {{ outputs.x }}")).toEqual([]);
  });
});

describe("renderShell", () => {
  const evil = "$(touch pwned); `touch pwned2` 'q' \"d\" \\ * $HOME";

  it("passes the exact value in unquoted, double- and single-quoted contexts", () => {
    const values = { a: ["up", "v", evil] as [string, string, string] };
    expect(sh("printf '%s' {{ outputs.up.v }}", values)).toBe(evil);
    expect(sh('printf "%s" "<{{ outputs.up.v }}>"', values)).toBe(`<${evil}>`);
    expect(sh("printf '%s' '<{{ outputs.up.v }}>'", values)).toBe(`<${evil}>`);
    expect(existsSync(join(dir, "pwned"))).toBe(false);
    expect(existsSync(join(dir, "pwned2"))).toBe(false);
  });

  it("never executes a value inside a heredoc either", () => {
    const values = { a: ["up", "v", "$(touch pwned3)"] as [string, string, string] };
    sh("cat <<EOF\n{{ outputs.up.v }}\nEOF", values);
    expect(existsSync(join(dir, "pwned3"))).toBe(false);
  });

  it("keeps escaped quotes out of the quoting state", () => {
    const values = { a: ["up", "v", "a b"] as [string, string, string] };
    expect(sh('printf "%s|" \\" {{ outputs.up.v }}', values)).toBe('"|a b|');
  });

  it("leaves unknown placeholders untouched", () => {
    expect(renderShell("echo {{ outputs.x.y }}", new OutputValues())).toBe("echo {{ outputs.x.y }}");
  });
});

describe("renderLiteral", () => {
  it("substitutes the raw value for argv and env", () => {
    const v = new OutputValues();
    v.set("extract", "rows", "$(x) 'y'");
    expect(renderLiteral("--rows={{ outputs.extract.rows }}", v)).toBe("--rows=$(x) 'y'");
  });

  it("names env variables upper case with non-alphanumerics as _", () => {
    expect(outputEnvName("load.db-1", "row_count")).toBe("SVC_OUTPUT_LOAD_DB_1_ROW_COUNT");
  });
});
