/** Blocks this thread for `ms` (start-up paths that are synchronous and must wait for a racer: the daemon lock). */
export function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
