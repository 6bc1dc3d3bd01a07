/**
 * `svc dash [--print]`: opens the dashboard of the running daemon in a
 * browser ($BROWSER, else `open` on macOS, else `xdg-open` when a display
 * exists) and prints its URL; without a browser it only prints the URL.
 */
import { spawn } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";
import type { Command } from "commander";
import { clientFor, clientGlobals } from "../client/index.js";
import { shownUrl } from "../client/target.js";
import type { CliContext } from "../context.js";
import { printLine } from "../output.js";
import { baseUrl } from "./lifecycle.js";

export function register(program: Command, ctx: CliContext): void {
  program
    .command("dash")
    .description("open the dashboard in a browser (prints its URL; only prints it when no browser can be opened)")
    .option("--print", "only print the URL")
    .action(async (opts: { print?: boolean }, cmd: Command) => {
      const client = await clientFor(cmd, ctx);
      await client.get("/api/status"); // a clear "no daemon" before anything else
      client.close();
      const t = client.target;
      const url = t.kind === "http" ? shownUrl(t.url) : await baseUrl(ctx, clientGlobals(cmd), t.projectFile!, t.dataDir!);
      printLine(ctx.output, url);
      if (opts.print) return;
      const opener = browserCommand(ctx.env);
      if (opener === null) return;
      const child = spawn(opener, [url], { detached: true, stdio: "ignore", env: ctx.env });
      child.on("error", () => {}); // no browser after all: the URL is printed
      child.unref();
    });
}

/** $BROWSER, `open` on macOS, `xdg-open` with a display, else null. */
export function browserCommand(env: NodeJS.ProcessEnv): string | null {
  if (env.BROWSER) return env.BROWSER;
  if (process.platform === "darwin") return "open";
  if (process.platform === "win32") return null;
  if (!env.DISPLAY && !env.WAYLAND_DISPLAY) return null;
  return onPath("xdg-open", env.PATH ?? "");
}

function onPath(name: string, path: string): string | null {
  for (const dir of path.split(delimiter)) {
    if (dir === "") continue;
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {
      // not here
    }
  }
  return null;
}
