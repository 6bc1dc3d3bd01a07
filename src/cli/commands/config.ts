/**
 * `svc config show [--json]`: the effective configuration (defaults applied,
 * secrets and job env values `***`), read offline from the files.
 * YAML by default (svc.yaml, then svcd.yaml as a second document); --json
 * prints `{"config", "daemon"}`, the shape of `GET /api/config`.
 */
import type { Command } from "commander";
import { globalsOf, type CliContext } from "../context.js";
import { printJson, printLine } from "../output.js";

export function register(program: Command, ctx: CliContext): void {
  const config = program.command("config").description("inspect the configuration");
  config
    .command("show")
    .description("print the effective config: every default applied, secrets shown as ***")
    .option("--json", 'print {"config", "daemon"} as JSON')
    .action(async (opts: { json?: boolean }, cmd: Command) => {
      const { daemonView, effectiveView, failWithIssues, loadBoth, shownPath, yaml } = await import("../configFiles.js");
      const files = loadBoth(ctx, globalsOf(cmd));
      const { project, daemon } = files;
      if (!project.ok || !daemon.ok) {
        return failWithIssues(ctx, [...(project.ok ? [] : project.errors), ...(daemon.ok ? [] : daemon.errors)]);
      }
      const view = { config: effectiveView(project.value, { redact: true }), daemon: daemonView(daemon.value) };
      if (opts.json) {
        printJson(ctx.output, view);
        return;
      }
      const Y = yaml();
      const dump = (v: unknown) => Y.stringify(v, { lineWidth: 0, nullStr: "null" }).trimEnd();
      const daemonSource = files.daemonFile === null ? "no svcd.yaml: all defaults" : shownPath(ctx, files.daemonFile);
      printLine(ctx.output, `# ${shownPath(ctx, files.projectFile)}: effective config (defaults applied, secrets ***)`);
      printLine(ctx.output, dump(view.config));
      printLine(ctx.output, "---");
      printLine(ctx.output, `# svcd.yaml (${daemonSource}): effective daemon config`);
      printLine(ctx.output, dump(view.daemon));
    });
}
