/**
 * startProcess plus a deadline: when `timeoutMs` passes before the run ends,
 * the group is stopped (SIGTERM, SIGKILL after killGraceMs) and the result
 * says `timedOut: true`. Used for job timeouts and healthchecks.
 */
import { startProcess } from "./startProcess.js";
import type { SpawnSpec, TimedExitInfo, TimedProcessHandle, TimedStartOptions } from "./types.js";

export function runWithTimeout(spec: SpawnSpec, opts: TimedStartOptions): TimedProcessHandle {
  const handle = startProcess(spec, opts);
  let stoppedByCaller = false;
  let timedOut = false;
  const timer =
    opts.timeoutMs === null || (handle.pid === null && handle.spawning === null)
      ? undefined
      : setTimeout(() => {
          // A stop() the caller already asked for keeps its own reason (cancel).
          if (!stoppedByCaller) timedOut = true;
          handle.stop();
        }, opts.timeoutMs);
  const exited = handle.exited.then((info): TimedExitInfo => {
    clearTimeout(timer);
    return { ...info, timedOut };
  });
  return {
    get pid() {
      return handle.pid;
    },
    get pidStart() {
      return handle.pidStart;
    },
    get spawning() {
      return handle.spawning;
    },
    exited,
    stop: () => {
      if (!timedOut) stoppedByCaller = true;
      handle.stop();
    },
    kill: () => {
      if (!timedOut) stoppedByCaller = true;
      handle.kill();
    },
  };
}
