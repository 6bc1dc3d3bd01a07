/**
 * `svc integrations list [--json]` (name, provider, credential status, last
 * test) and `svc integrations test <name> [--json]` (one real delivery;
 * exit 1 when it fails).
 */
import type { Command } from "commander";
import { ApiError } from "../client/errors.js";
import { clientFor } from "../client/index.js";
import { cell, localTime, styleFor, table } from "../client/present.js";
import type { Integration } from "../client/types.js";
import type { CliContext } from "../context.js";
import { CliError, printJson, printLine } from "../output.js";

interface TestAnswer {
  ok: boolean;
  status: number | null;
  response: unknown;
  error?: string | null;
}

export function register(program: Command, ctx: CliContext): void {
  const group = program.command("integrations").description("notification integrations from svc.yaml");
  group
    .command("list")
    .description("every integration: provider, credential status, last test result and time")
    .option("--json", 'print {"integrations": [{"name", "provider", "credential_status", "last_test_result", "last_test_at"}]}')
    .action(async (opts: { json?: boolean }, cmd: Command) => {
      const answer = await (await clientFor(cmd, ctx)).get<{ integrations: Integration[] }>("/api/integrations");
      if (opts.json) return printJson(ctx.output, answer);
      if (answer.integrations.length === 0) return printLine(ctx.output, "(no integrations in svc.yaml)");
      const style = styleFor(ctx);
      const rows = answer.integrations.map((i) => [
        i.name,
        i.provider,
        i.credential_status === "configured" ? style.green(i.credential_status) : style.red(i.credential_status),
        cell(i.last_test_result, 40),
        localTime(i.last_test_at),
      ]);
      printLine(ctx.output, table(["NAME", "PROVIDER", "CREDENTIALS", "LAST TEST", "TESTED AT"], rows, style));
    });

  group
    .command("test")
    .description("send one real test delivery through the integration; exit 1 if it fails")
    .argument("<name>", "integration name")
    .option("--json", 'print {"ok", "status", "response", "error"}')
    .action(async (name: string, opts: { json?: boolean }, cmd: Command) => {
      const client = await clientFor(cmd, ctx);
      const res = await client.post<TestAnswer>(`/api/integrations/${encodeURIComponent(name)}/test`).catch((e: unknown) => {
        if (e instanceof ApiError && e.status === 404) throw new CliError(`unknown integration "${name}" (svc integrations list shows them)`);
        throw e;
      });
      if (opts.json) printJson(ctx.output, res);
      const status = res.status === null ? "no answer" : `status ${res.status}`;
      if (res.ok) {
        if (!opts.json) printLine(ctx.output, `${name}: test delivery ok (${status})`);
        return;
      }
      const why = res.error ? `: ${res.error}` : typeof res.response === "string" && res.response !== "" ? `: ${res.response}` : "";
      throw new CliError(`${name}: test delivery failed (${status})${why}`);
    });
}
