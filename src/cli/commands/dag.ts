/** `svc dag [--json]`: the dependency graph as a tree, or CONTRACT §4's JSON shape. */
import type { Command } from "commander";
import { globalsOf, type CliContext } from "../context.js";
import { printJson, printLine } from "../output.js";

export function register(program: Command, ctx: CliContext): void {
  program
    .command("dag")
    .description("print the dependency graph (upstream jobs above their downstreams)")
    .option("--json", 'print {"nodes", "edges", "order"}')
    .action(async (opts: { json?: boolean }, cmd: Command) => {
      const { frequencyLabel, requireProject, scheduleLabel } = await import("../configFiles.js");
      const { dagJson, renderDagTree } = await import("../../graph/index.js");
      const project = requireProject(ctx, globalsOf(cmd));
      const job = (name: string) => project.jobs.get(name)!;
      if (opts.json) {
        printJson(
          ctx.output,
          dagJson(project.graph, (name) => ({ frequency: frequencyLabel(job(name)), tags: job(name).tags })),
        );
        return;
      }
      if (project.jobs.size === 0) {
        printLine(ctx.output, "(no jobs)");
        return;
      }
      printLine(ctx.output, renderDagTree(project.graph, (name) => `${name}  ${scheduleLabel(job(name))}`));
    });
}
