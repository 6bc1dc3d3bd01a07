/**
 * startProcess plus a deadline: when `timeoutMs` passes before the run ends,
 * the group is stopped (SIGTERM, SIGKILL after killGraceMs) and the result
 * says `timedOut: true`. Used for job timeouts and healthchecks.
 */
import { startProcess } from "./startProcess.js";
import type { ProcessHandle, SpawnSpec, TimedExitInfo, TimedProcessHandle, TimedStartOptions } from "./types.js";

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
  return new TimedProcess(handle, exited, () => {
    if (!timedOut) stoppedByCaller = true;
  });
}

/** runWithTimeout's handle: a class, its getters on the prototype (why: startProcess.ts, above PendingProcess). */
class TimedProcess implements TimedProcessHandle {
  constructor(
    private readonly handle: ProcessHandle,
    readonly exited: Promise<TimedExitInfo>,
    /** Notes that the caller stopped it (unless the deadline did first). */
    private readonly byCaller: () => void,
  ) {}
  get pid(): number | null {
    return this.handle.pid;
  }
  get pidStart(): string | null {
    return this.handle.pidStart;
  }
  get spawning(): Promise<void> | null {
    return this.handle.spawning;
  }
  stop(): void {
    this.byCaller();
    this.handle.stop();
  }
  kill(): void {
    this.byCaller();
    this.handle.kill();
  }
}
