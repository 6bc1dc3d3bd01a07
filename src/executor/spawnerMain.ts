/**
 * The spawner: a small helper process that starts svcd's jobs (see
 * remoteSpawner.ts for why). It imports nothing but Node's child_process and
 * net modules and liveness.ts, so its own memory stays a few MB: fork() from
 * it costs what it costs from a fresh Node process, however big svcd grows.
 *
 * Protocol, JSON over the IPC channel fork() opened:
 * - in:  {t: "spawn", reqs: [{id, file, args, cwd, env}]}: spawned in order,
 *   each in its own process group, stdin /dev/null, stdout and stderr pipes.
 * - out, per request, in this order: {t: "started", id, pid, pidStart}, then
 *   {t: "pipe", id, fd: 1} and {t: "pipe", id, fd: 2}, each carrying the
 *   read end of that pipe (the daemon reads the job's output itself), and
 *   later {t: "exit", id, code, signal}; or {t: "failed", id, code, message}
 *   when the process could not start.
 *
 * It exits when the daemon closes the channel (the daemon stopped or died);
 * the jobs themselves keep running, as they would have without it. Signals
 * meant for the daemon's process group (Ctrl-C) are ignored: the daemon
 * decides when jobs stop, and their exit statuses must still reach it.
 */
import { spawn, type ChildProcess } from "node:child_process";
import type { Readable } from "node:stream";
import { processStartTime } from "./liveness.js";

export interface SpawnRequest {
  id: number;
  file: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
}

export type SpawnerMessage =
  | { t: "started"; id: number; pid: number; pidStart: string | null }
  | { t: "pipe"; id: number; fd: 1 | 2 }
  | { t: "failed"; id: number; code: string | null; message: string }
  | { t: "exit"; id: number; code: number | null; signal: string | null };

/** The libuv stream handle under a pipe socket (Node's own handle-passing uses it too). */
interface StreamHandle {
  readStop(): number;
}

/**
 * Takes the pipe's handle away from Node's socket before the event loop runs:
 * nothing has been read from it yet, and the socket will not read, end or
 * close it (Node would otherwise drain and close it when the child exits,
 * before the handle could be sent).
 */
function detach(pipe: Readable | null): StreamHandle | null {
  const socket = pipe as unknown as { _handle: StreamHandle | null } | null;
  const handle = socket?._handle ?? null;
  if (!socket || !handle) return null;
  handle.readStop();
  socket._handle = null;
  return handle;
}

function send(message: SpawnerMessage, handle?: StreamHandle): void {
  try {
    (process.send as (m: unknown, h?: unknown) => boolean)(message, handle);
  } catch {
    process.exit(0); // the channel is closed: the daemon is gone
  }
}

function start(req: SpawnRequest): void {
  let child: ChildProcess;
  try {
    child = spawn(req.file, req.args, { cwd: req.cwd, env: req.env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    send({ t: "failed", id: req.id, code: err.code ?? null, message: err.message });
    return;
  }
  if (child.pid === undefined) {
    child.once("error", (err: NodeJS.ErrnoException) => send({ t: "failed", id: req.id, code: err.code ?? null, message: err.message }));
    return;
  }
  const pid = child.pid;
  const out = detach(child.stdout);
  const err = detach(child.stderr);
  send({ t: "started", id: req.id, pid, pidStart: processStartTime(pid) });
  if (out) send({ t: "pipe", id: req.id, fd: 1 }, out);
  if (err) send({ t: "pipe", id: req.id, fd: 2 }, err);
  child.on("error", () => {}); // only a failed child.kill() reports here, and we never call it
  child.once("exit", (code, signal) => send({ t: "exit", id: req.id, code, signal }));
}

export function runSpawner(): void {
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"] as const) process.on(signal, () => {});
  process.on("message", (m: { t?: string; reqs?: SpawnRequest[] }) => {
    if (m.t === "spawn" && Array.isArray(m.reqs)) for (const req of m.reqs) start(req);
  });
  process.on("disconnect", () => process.exit(0));
}

if (process.send !== undefined && process.env.SVC_SPAWNER === "1") runSpawner();
