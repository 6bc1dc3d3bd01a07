import { setFlagsFromString } from "node:v8";
import type { Worker } from "node:worker_threads";

/**
 * The V8 flags svcd sets at runtime (src/daemon/heap.ts says why): the young
 * generation keeps its initial size instead of growing to 2 x 16 MiB.
 *
 * Starting a worker thread sets V8's flags again from the command line, and
 * flags set at runtime are lost: after the first `new Worker` the daemon's
 * young generation grew to 32 MiB (~33 MB more committed heap; measured in
 * Node 20: 2 MB of new space without a worker, 32 MB with one). So every
 * worker svcd starts goes through `keepHeapFlags`, which sets them again once
 * the thread is up (setting them right after `new Worker` is too early).
 */
export function applyHeapFlags(): void {
  setFlagsFromString("--semi-space-growth-factor=1");
}

/** `w`, with the heap flags set again once it is online (see above). */
export function keepHeapFlags(w: Worker): Worker {
  w.once("online", applyHeapFlags);
  return w;
}
