/**
 * The systemd unit of one svc project (CONTRACT §7.4, `svc service install`).
 * Pure: the caller passes every path and setting; tests render units with
 * fixed inputs and systemd-analyze verifies them.
 *
 * Stopping. systemd's default KillMode=control-group sends SIGTERM to every
 * process of the unit at once: svcd and each running job, whose processes
 * are in the unit's cgroup even though svcd starts them in their own process
 * groups. The jobs would die before svcd could drain them, and each run
 * would be recorded as killed by a signal. So:
 *   KillMode=mixed: SIGTERM goes to svcd alone. svcd stops as on any SIGTERM:
 *     it lets running jobs finish for up to scheduler.shutdown_timeout, then
 *     sends SIGTERM to the process group of each job still running and
 *     SIGKILL after executor.kill_grace, records every run and exits. Only
 *     then (or at the timeout below) does systemd SIGKILL whatever is left
 *     in the cgroup (a job's daemonized grandchild that left its group).
 *   TimeoutStopSec = shutdown_timeout + kill_grace + 30 s: systemd's SIGKILL
 *     must never cut svcd's own stop short (CONTRACT: "above
 *     scheduler.shutdown_timeout"); the 30 s cover recording the ends and
 *     closing the database.
 * Restart=on-failure restarts svcd after a crash (a non-zero exit or a
 * signal); a stop, which exits 0, stays stopped. ExecReload sends SIGHUP,
 * which reloads svc.yaml and svcd.yaml.
 */

export type UnitScope = "user" | "system";

export interface UnitOptions {
  scope: UnitScope;
  /** Absolute path of the package's bin/svcd launcher. */
  svcd: string;
  /** Directory of the node binary, put first on the unit's PATH (bin/svcd runs `node`). */
  nodeDir: string;
  /** Absolute path of svc.yaml. */
  config: string;
  /** --data-dir, when not the default. */
  dataDir: string | null;
  /** --daemon-config, when given explicitly. */
  daemonConfig: string | null;
  shutdownTimeoutMs: number;
  killGraceMs: number;
  /** For system units: the user svcd runs as. */
  user: string | null;
}

/** Extra seconds in TimeoutStopSec beyond shutdown_timeout + kill_grace. */
export const STOP_MARGIN_S = 30;
export const RESTART_SEC = 5;

/** `svc-<name>.service` from the project directory's name (letters, digits, `_.-`; others become `-`). */
export function unitName(projectDir: string): string {
  const base = projectDir.replace(/\/+$/, "").split("/").pop() ?? "";
  const clean = base.replace(/[^A-Za-z0-9_.-]+/g, "-").replace(/^-+|-+$/g, "");
  return `svc-${clean === "" ? "project" : clean}.service`;
}

export function timeoutStopSec(shutdownTimeoutMs: number, killGraceMs: number): number {
  return Math.ceil((shutdownTimeoutMs + killGraceMs) / 1000) + STOP_MARGIN_S;
}

export function renderUnit(o: UnitOptions): string {
  const workingDir = o.config.slice(0, o.config.lastIndexOf("/")) || "/";
  const args = [o.svcd, "-c", o.config];
  if (o.dataDir !== null) args.push("--data-dir", o.dataDir);
  if (o.daemonConfig !== null) args.push("--daemon-config", o.daemonConfig);
  const lines = [
    "# Written by `svc service install`; `svc service uninstall` removes it.",
    "[Unit]",
    `Description=svc job scheduler for ${escapeValue(o.config)}`,
    "After=network-online.target",
    "Wants=network-online.target",
    "",
    "[Service]",
    "Type=exec",
    `ExecStart=${args.map(execArg).join(" ")}`,
    "ExecReload=/bin/kill -HUP $MAINPID",
    `WorkingDirectory=${escapeValue(workingDir)}`, // a path, taken as is (quotes are not allowed here)
    `Environment=${quoteArg(`PATH=${[...new Set([o.nodeDir, "/usr/local/bin", "/usr/bin", "/bin"])].join(":")}`)}`,
    ...(o.scope === "system" && o.user !== null ? [`User=${o.user}`] : []),
    "Restart=on-failure",
    `RestartSec=${RESTART_SEC}s`,
    "# svcd drains and stops its jobs' process groups itself on SIGTERM (see DEPLOY.md).",
    "KillMode=mixed",
    `TimeoutStopSec=${timeoutStopSec(o.shutdownTimeoutMs, o.killGraceMs)}s`,
    "",
    "[Install]",
    `WantedBy=${o.scope === "user" ? "default.target" : "multi-user.target"}`,
    "",
  ];
  return lines.join("\n");
}

/**
 * One word of a command line or path setting, quoted the way systemd reads
 * it: double quotes when it holds a space, quote or backslash (with `\` and
 * `"` escaped), and `%` doubled (specifiers).
 */
export function quoteArg(s: string): string {
  if (/[\n\r]/.test(s)) throw new Error(`a path with a line break cannot go into a systemd unit: ${JSON.stringify(s)}`);
  const v = escapeValue(s);
  return /[\s"'\\]/.test(v) ? `"${v.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"` : v;
}

/** A word of ExecStart=: quoted as quoteArg, and `$` doubled (systemd substitutes `$VAR` and `${VAR}` there). */
function execArg(s: string): string {
  return quoteArg(s).replace(/\$/g, "$$$$");
}

function escapeValue(s: string): string {
  return s.replace(/%/g, "%%");
}
