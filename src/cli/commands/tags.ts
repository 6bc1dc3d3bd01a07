/** `svc tags list [--json]`: every tag with its job count (GET /api/tags). */
import type { Command } from "commander";
import { clientFor } from "../client/index.js";
import { styleFor, table } from "../client/present.js";
import type { CliContext } from "../context.js";
import { printJson, printLine } from "../output.js";

export function register(program: Command, ctx: CliContext): void {
  const tags = program.command("tags").description("tags and their jobs");
  tags
    .command("list")
    .description("every tag with the number of jobs that have it")
    .option("--json", 'print {"tags": [{"tag", "jobs"}]}')
    .action(async (opts: { json?: boolean }, cmd: Command) => {
      const answer = await (await clientFor(cmd, ctx)).get<{ tags: { tag: string; jobs: number }[] }>("/api/tags");
      if (opts.json) return printJson(ctx.output, answer);
      if (answer.tags.length === 0) return printLine(ctx.output, "(no tags)");
      printLine(ctx.output, table(["TAG", "JOBS"], answer.tags.map((t) => [t.tag, String(t.jobs)]), styleFor(ctx)));
    });
}
