import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { engineKit, type Kit } from "../helpers/engineKit.js";

let kit: Kit | null = null;
afterEach(async () => {
  await kit?.close();
  kit = null;
});

const last = (k: Kit, job: string) => k.runsOf(job).at(-1);

describe("dependency triggering and output passing", () => {
  it("passes on the outputs of the attempt that succeeded, not those of a failed attempt before it", async () => {
    kit = await engineKit(`
jobs:
  extract:
    command: "if [ -f marker ]; then echo 7; else touch marker; echo 5; exit 1; fi"
    retries: 1
    retry_delay: "fixed:10ms"
    output: {rows: last_line}
  transform:
    command: "echo got {{ outputs.extract.rows }} env $SVC_OUTPUT_EXTRACT_ROWS"
    frequency: after:extract
`);
    const run = kit.engine.runNow("extract", { triggeredBy: "cli" });
    const done = await kit.waitRun(run.id, ["SUCCESS", "FAILED"]);
    expect([done.status, done.attempt]).toEqual(["SUCCESS", 2]);
    expect(kit.store.outputs.forRun(run.id).map((o) => o.value)).toEqual(["5", "7"]);
    const t = await kit.waitFor("transform", () => kit!.runsOf("transform").find((r) => r.status === "SUCCESS" || r.status === "FAILED"));
    expect(kit.lines(t.id, ["stdout"])).toEqual(["--- attempt 1 ---", "got 7 env 7"]);
  });

  it("runs b after a in the same cycle with a's output in command and env", async () => {
    kit = await engineKit(`
jobs:
  a:
    command: "echo 'rows=42'; echo '{\\"meta\\": {\\"count\\": 7}}'"
    output:
      rows: "regex:rows=(\\\\d+)"
      count: "json_field:meta.count"
      first: first_line
  b:
    command: "echo got {{ outputs.a.rows }} $COUNT $SVC_OUTPUT_A_FIRST"
    frequency: "after:a"
    env:
      COUNT: "{{ outputs.a.count }}"
`);
    const root = kit.engine.runNow("a", { triggeredBy: "cli" });
    await kit.waitRun(root.id, ["SUCCESS"]);
    const b = await kit.waitFor("b to finish", () => {
      const r = last(kit!, "b");
      return r && r.status === "SUCCESS" ? r : null;
    });
    expect(b.cycle_id).toBe(root.cycle_id);
    expect(b.trigger).toBe("dependency");
    expect(b.triggered_by).toBe("a");
    expect(kit.lines(b.id, ["stdout"]).at(-1)).toBe("got 42 7 rows=42");
    const outputs = kit.store.outputs.forRun(root.id).map((o) => [o.var_name, o.value]).sort();
    expect(outputs).toEqual([
      ["count", "7"],
      ["first", "rows=42"],
      ["rows", "42"],
    ]);
  });

  it("captures exit_code and last_line, and renders into an array command", async () => {
    kit = await engineKit(`
jobs:
  a:
    command: "echo first; echo last; echo; exit 0"
    output: {code: exit_code, tail: last_line}
  b:
    command: ["/bin/echo", "code={{ outputs.a.code }}", "tail={{ outputs.a.tail }}", "$(not run)"]
    frequency: "after:a"
`);
    kit.engine.runNow("a", { triggeredBy: "cli" });
    const b = await kit.waitFor("b", () => (last(kit!, "b")?.status === "SUCCESS" ? last(kit!, "b") : null));
    expect(kit.lines(b.id, ["stdout"]).at(-1)).toBe("code=0 tail=last $(not run)");
  });

  it("never executes an output value (injection attempt)", async () => {
    kit = await engineKit(`
jobs:
  a:
    command: "echo '$(touch pwned)'; echo '\`touch pwned2\`'"
    output: {v: first_line, w: last_line}
  b:
    command: "echo {{ outputs.a.v }} && echo \\"{{ outputs.a.w }}\\""
    frequency: "after:a"
`);
    kit.engine.runNow("a", { triggeredBy: "cli" });
    const b = await kit.waitFor("b", () => {
      const r = last(kit!, "b");
      return r && r.status === "SUCCESS" ? r : null;
    });
    expect(kit.lines(b.id, ["stdout"]).slice(1)).toEqual(["$(touch pwned)", "`touch pwned2`"]);
    expect(existsSync(join(kit.dir, "pwned"))).toBe(false);
    expect(existsSync(join(kit.dir, "pwned2"))).toBe(false);
  });

  it("fails at dispatch when the referenced output has no value in the cycle", async () => {
    kit = await engineKit(`
jobs:
  a:
    command: "echo nothing"
    output: {rows: "regex:rows=(\\\\d+)"}
  b:
    command: "echo {{ outputs.a.rows }}"
    frequency: "after:a"
`);
    const root = kit.engine.runNow("a", { triggeredBy: "cli" });
    const b = await kit.waitFor("b to fail", () => {
      const r = last(kit!, "b");
      return r && r.status === "FAILED" ? r : null;
    });
    expect(b.error).toBe(`dispatch: no value for outputs.a.rows in this cycle (${root.cycle_id}): job a recorded no "rows" output in it`);
  });

  it("keeps two concurrent cycles of one chain apart", async () => {
    kit = await engineKit(`
jobs:
  a:
    command: "echo $SVC_RUN_ID; sleep 0.2"
    output: {id: first_line}
    concurrency: allow
  b:
    command: "echo {{ outputs.a.id }}"
    frequency: "after:a"
    concurrency: allow
`);
    const r1 = kit.engine.runNow("a", { triggeredBy: "cli" });
    const r2 = kit.engine.runNow("a", { triggeredBy: "cli" });
    await kit.waitFor("two b runs", () => kit!.runsOf("b").filter((r) => r.status === "SUCCESS").length === 2);
    for (const b of kit.runsOf("b")) {
      const upstream = b.cycle_id === r1.cycle_id ? r1 : r2;
      expect(kit.lines(b.id, ["stdout"]).at(-1)).toBe(String(upstream.id));
    }
  });

  it("waits at the gate until every upstream succeeded in the cycle", async () => {
    kit = await engineKit(`
jobs:
  up1: {command: "sleep 0.2"}
  up2: {command: "exit 1"}
  down:
    command: "echo ran"
    depends_on: [up1, up2]
`);
    kit.engine.runNow("up2", { triggeredBy: "cli" });
    await kit.waitFor("up2 failed", () => last(kit!, "up2")?.status === "FAILED");
    const root = kit.engine.runNow("up1", { triggeredBy: "cli" });
    await kit.waitRun(root.id, ["SUCCESS"]);
    const down = await kit.waitFor("down created", () => last(kit!, "down"));
    await new Promise((r) => setTimeout(r, 300));
    expect(kit.store.runs.get(down.id)!.status).toBe("PENDING");
  });
});

describe("failure policies", () => {
  const chain = (policy: string) => `
jobs:
  a:
    command: "exit 2"
    on_failure: ${policy}
  b:
    command: "echo b"
    frequency: "after:a"
  c:
    command: "echo c"
    frequency: "after:b"
`;

  it("skip: the run ends SKIPPED and every dependent gets a SKIPPED row in the cycle", async () => {
    kit = await engineKit(chain("skip"));
    const a = kit.engine.runNow("a", { triggeredBy: "cli" });
    const done = await kit.waitRun(a.id, ["SKIPPED"]);
    expect(kit.statusesOf(a.id)).toEqual(["PENDING", "RUNNING", "FAILED", "SKIPPED"]);
    const b = last(kit, "b")!;
    const c = last(kit, "c")!;
    expect([b.status, b.cycle_id, b.error]).toEqual(["SKIPPED", done.cycle_id, "upstream skipped: a"]);
    expect([c.status, c.error]).toEqual(["SKIPPED", "upstream skipped: b"]);
  });

  it("skip, then a sibling upstream of the same join succeeds: the join keeps its one SKIPPED row, nothing waits PENDING", async () => {
    const yaml = `
jobs:
  root:
    command: "true"
  a:
    command: "exit 1"
    depends_on: [root]
    on_failure: skip
  b:
    command: "sleep 0.5"
    depends_on: [root]
  c:
    command: "echo c"
    depends_on: [a, b]
`;
    kit = await engineKit(yaml);
    const r = kit.engine.runNow("root", { triggeredBy: "cli" });
    await kit.waitRun(r.id, ["SUCCESS"]);
    const b = await kit.waitFor("b", () => kit!.runsOf("b")[0]);
    await kit.waitRun(b.id, ["SUCCESS"]);
    await kit.waitFor("the queue idle", () => kit!.engine.counts().waiting === 0 && kit!.engine.counts().running === 0);
    expect(kit.runsOf("c").map((x) => [x.status, x.error, x.cycle_id === r.cycle_id])).toEqual([["SKIPPED", "upstream skipped: a", true]]);
    // A person runs a again in the cycle, and it succeeds: the way is open again, and c runs.
    kit.reloadYaml(yaml.replace('command: "exit 1"', 'command: "true"'));
    const again = kit.engine.runNow("a", { triggeredBy: "cli", cycleId: r.cycle_id });
    await kit.waitRun(again.id, ["SUCCESS"]);
    const c2 = await kit.waitFor("c to run", () => kit!.runsOf("c").find((x) => x.status === "SUCCESS"));
    expect(c2.cycle_id).toBe(r.cycle_id);
  });

  it("a cancelled run ends FAILED whatever on_failure says: skip makes no SKIPPED rows, stop halts no cycle", async () => {
    const jobs = (policy: string) => `
jobs:
  w:
    command: "sleep 30"
    on_failure: ${policy}
  after_w:
    command: "echo after"
    frequency: "after:w"
`;
    for (const policy of ["skip", "stop"]) {
      kit = await engineKit(jobs(policy), { daemon: "executor:\n  kill_grace: 200ms\n" });
      const r = kit.engine.runNow("w", { triggeredBy: "cli" });
      await kit.waitRun(r.id, ["RUNNING"]);
      kit.engine.cancel("w");
      const done = await kit.waitRun(r.id, ["SUCCESS", "FAILED", "SKIPPED"]);
      expect([done.status, done.error], policy).toEqual(["FAILED", "cancelled"]);
      expect(kit.statusesOf(r.id), policy).toEqual(["PENDING", "RUNNING", "FAILED"]);
      expect(kit.runsOf("after_w"), policy).toEqual([]);
      expect(kit.engine.testSeam().ctx.halted.has(r.cycle_id), policy).toBe(false);
      await kit.close();
      kit = null;
    }
  });

  it("alert: FAILED, on_failure fires, dependents not triggered", async () => {
    kit = await engineKit(chain("alert"));
    const a = kit.engine.runNow("a", { triggeredBy: "cli" });
    await kit.waitRun(a.id, ["FAILED"]);
    await kit.waitFor("on_failure", () => kit!.notes.find((n) => n.event === "on_failure"));
    expect(kit.runsOf("b")).toEqual([]);
  });

  it("ignore: FAILED, no notification, nothing else", async () => {
    kit = await engineKit(chain("ignore"));
    const a = kit.engine.runNow("a", { triggeredBy: "cli" });
    await kit.waitRun(a.id, ["FAILED"]);
    expect(kit.notes.filter((n) => n.event === "on_failure")).toEqual([]);
    expect(kit.runsOf("b")).toEqual([]);
  });

  it("stop: pending runs of the cycle are skipped and running downstream runs cancelled", async () => {
    kit = await engineKit(
      `
jobs:
  root: {command: "echo go"}
  slow:
    command: "sleep 30"
    frequency: "after:root"
  breaker:
    command: "sleep 0.3; exit 1"
    frequency: "after:root"
    on_failure: stop
  after_slow:
    command: "echo never"
    depends_on: [slow, breaker]
  child:
    command: "sleep 30"
    frequency: "after:root"
    depends_on: [breaker]
`,
      { daemon: "executor:\n  kill_grace: 300ms\n" },
    );
    const root = kit.engine.runNow("root", { triggeredBy: "cli" });
    await kit.waitRun(root.id, ["SUCCESS"]);
    const breaker = await kit.waitFor("breaker failed", () => (last(kit!, "breaker")?.status === "FAILED" ? last(kit!, "breaker") : null));
    expect(breaker.cycle_id).toBe(root.cycle_id);
    // child waits on breaker at the gate, so it is PENDING and becomes SKIPPED
    const child = last(kit, "child")!;
    expect((await kit.waitRun(child.id, ["SKIPPED"])).error).toBe("pipeline stopped");
    // slow is not downstream of breaker: it keeps running
    expect(last(kit, "slow")!.status).toBe("RUNNING");
  });
});

describe("healthchecks", () => {
  const job = (hc: string, extra = "") => `
jobs:
  j:
    command: "echo main"
    healthcheck: ${hc}
${extra}`;

  it("pass: SUCCESS with hc_status pass and healthcheck lines stored apart", async () => {
    kit = await engineKit(job(`{command: "echo healthy"}`));
    const run = kit.engine.runNow("j", { triggeredBy: "cli" });
    const done = await kit.waitRun(run.id, ["SUCCESS"]);
    expect(done.hc_status).toBe("pass");
    expect(kit.lines(run.id, ["healthcheck"])).toEqual(["healthy"]);
  });

  it("mark_failed: FAILED with hc_status fail, retried by policy", async () => {
    kit = await engineKit(job(`{command: "echo sick >&2; exit 1"}`, `    retries: 1\n    retry_delay: "fixed:50ms"`));
    const run = kit.engine.runNow("j", { triggeredBy: "cli" });
    const done = await kit.waitFor("final", () => {
      const r = kit!.store.runs.get(run.id)!;
      return r.status === "FAILED" && r.attempt === 2 ? r : null;
    });
    expect(done.hc_status).toBe("fail");
    expect(done.error).toBe("healthcheck failed (exit code 1)");
    expect(kit.lines(run.id, ["healthcheck"])).toContain("sick");
  });

  it("warn_only: SUCCESS with hc_status warn and the on_sla_breach event", async () => {
    kit = await engineKit(job(`{command: "exit 1", on_fail: warn_only}`));
    const run = kit.engine.runNow("j", { triggeredBy: "cli" });
    const done = await kit.waitRun(run.id, ["SUCCESS"]);
    expect(done.hc_status).toBe("warn");
    const ev = await kit.waitFor("sla event", () => kit!.notes.find((n) => n.event === "on_sla_breach"));
    expect(ev.fallbackToFailure).toBe(true);
  });

  it("is skipped when the main command fails", async () => {
    kit = await engineKit(`jobs:\n  j:\n    command: "exit 1"\n    healthcheck: {command: "echo should-not-run"}\n`);
    const run = kit.engine.runNow("j", { triggeredBy: "cli" });
    const done = await kit.waitRun(run.id, ["FAILED"]);
    expect(done.hc_status).toBeNull();
    expect(kit.lines(run.id, ["healthcheck"])).toEqual([]);
  });

  it("times out with SIGTERM then SIGKILL and marks the run failed", async () => {
    kit = await engineKit(job(`{command: "sleep 30", timeout: 300ms}`), { daemon: "executor:\n  kill_grace: 200ms\n" });
    const run = kit.engine.runNow("j", { triggeredBy: "cli" });
    const done = await kit.waitRun(run.id, ["FAILED"]);
    expect(done.error).toBe("healthcheck timeout after 300ms");
    expect(done.hc_status).toBe("fail");
  });
});

describe("SLA", () => {
  it("marks a slow run once and lets it complete; a fast one is not marked", async () => {
    kit = await engineKit(`jobs:\n  slow:\n    command: "sleep 1.6"\n    sla: 500ms\n  fast:\n    command: "true"\n    sla: 5s\n`);
    const slow = kit.engine.runNow("slow", { triggeredBy: "cli" });
    const fast = kit.engine.runNow("fast", { triggeredBy: "cli" });
    const done = await kit.waitRun(slow.id, ["SUCCESS"]);
    expect(done.sla_breached).toBe(1);
    expect((await kit.waitRun(fast.id, ["SUCCESS"])).sla_breached).toBe(0);
    const breaches = kit.notes.filter((n) => n.event === "on_sla_breach");
    expect(breaches.map((n) => n.run.id)).toEqual([slow.id]);
  });

  it("a run that passes its SLA and ends before the next whole-second tick is marked and reported too", async () => {
    // 50 ms over, 100 ms long: a tick lands in that window about one time in ten; the end catches every one.
    kit = await engineKit(`jobs:
  brief:
    command: "sleep 0.15"
    sla: 50ms
`);
    for (let i = 0; i < 3; i++) {
      const run = kit.engine.runNow("brief", { triggeredBy: "cli" });
      const done = await kit.waitRun(run.id, ["SUCCESS"]);
      expect(done.sla_breached, `run ${i}`).toBe(1);
    }
    await kit.waitFor("three breach notes", () => kit!.notes.filter((n) => n.event === "on_sla_breach").length === 3, 5_000);
    expect(kit.notes.filter((n) => n.event === "on_sla_breach").map((n) => n.run.sla_breached)).toEqual([1, 1, 1]);
  });
});

describe("manual retry", () => {
  it("creates a new run in the same cycle and continues the chain", async () => {
    kit = await engineKit(`
jobs:
  a:
    command: "test -f ok || { touch ok; exit 1; }; echo v=1"
    output: {v: last_line}
  b:
    command: "echo {{ outputs.a.v }}"
    frequency: "after:a"
`);
    const first = kit.engine.runNow("a", { triggeredBy: "cli" });
    await kit.waitRun(first.id, ["FAILED"]);
    const again = kit.engine.retry("a", { triggeredBy: "cli" });
    expect(again.cycle_id).toBe(first.cycle_id);
    expect(again.attempt).toBe(2);
    await kit.waitRun(again.id, ["SUCCESS"]);
    const b = await kit.waitFor("b", () => (last(kit!, "b")?.status === "SUCCESS" ? last(kit!, "b") : null));
    expect(b.cycle_id).toBe(first.cycle_id);
    expect(() => kit!.engine.retry("a", { triggeredBy: "cli" })).toThrow(/only a FAILED run can be retried/);
  });
});
