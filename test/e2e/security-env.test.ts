/**
 * The `svc` client's token and address never reach a job: svcd drops SVC_TOKEN and SVC_ADDR from
 * the environment its jobs inherit (a shell that exported them for `svc` may start svcd too).
 */
import { afterAll, describe, expect, it } from "vitest";
import { cleanup, project, startDaemon, until, type DaemonProc } from "../helpers/daemonKit.js";

const YAML = `jobs:
  envdump:
    command: "env | grep '^SVC_' | sort; echo HOME_SEEN=$HOME"
`;

let d: DaemonProc | null = null;
const dir = project(YAML);
afterAll(async () => {
  await d?.stop();
  cleanup(dir);
});

describe("the client's variables in svcd's environment", () => {
  it("are not passed to jobs; svcd's own variables and the rest of the environment are", async () => {
    d = await startDaemon(dir, [], { SVC_TOKEN: "client-secret-123", SVC_ADDR: "http://admin:pw-456@127.0.0.1:9", HOME: "/home/seen" });
    const run = await d.api<{ run_id: number }>("POST", "/api/jobs/envdump/run");
    expect(run.status).toBe(202);
    const id = run.body.run_id;
    await until("the run to finish", async () => (await d!.api<{ status: string }>("GET", `/api/runs/${id}`)).body.status === "SUCCESS");
    const logs = await d.api<{ lines: { line: string }[] }>("GET", `/api/runs/${id}/logs`);
    const lines = logs.body.lines.map((l) => l.line);
    expect(lines).toContain("HOME_SEEN=/home/seen");
    expect(lines).toContain(`SVC_RUN_ID=${id}`);
    expect(lines.filter((l) => /^SVC_(TOKEN|ADDR)=/.test(l))).toEqual([]);
    expect(JSON.stringify(logs.body)).not.toMatch(/client-secret-123|pw-456/);
  });
});
