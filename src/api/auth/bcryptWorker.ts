import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import { keepHeapFlags } from "../../shared/heapFlags.js";

/**
 * bcrypt off the event loop. bcryptjs is plain JavaScript: `compareSync`
 * blocks for the whole hash (about 100 ms at cost 10 here), and its async
 * API still runs on the main thread in slices of up to 100 ms. So every
 * comparison goes to one worker thread, which runs `compareSync` there; the
 * daemon's loop only passes messages. One worker: the machines are small,
 * and a second would take the core the daemon itself needs.
 *
 * The worker is started on first use, does not keep the process alive and
 * is started again if it dies.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const bcrypt = require(workerData.bcrypt);
parentPort.on("message", ({ id, password, hash }) => {
  let ok = false;
  try { ok = bcrypt.compareSync(password, hash); } catch { ok = false; }
  parentPort.postMessage({ id, ok });
});
`;

interface Pending {
  resolve(ok: boolean): void;
  reject(e: Error): void;
}

export class BcryptWorker {
  private worker: Worker | null = null;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private closed = false;

  /** Comparisons queued or running. */
  get inFlight(): number {
    return this.pending.size;
  }

  compare(password: string, hash: string): Promise<boolean> {
    if (this.closed) return Promise.reject(new Error("the password checker is stopped"));
    const worker = this.worker ?? this.start();
    const id = this.nextId++;
    return new Promise<boolean>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ id, password, hash });
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const w = this.worker;
    this.worker = null;
    this.failAll(new Error("the password checker is stopped"));
    if (w) await w.terminate();
  }

  private start(): Worker {
    const bcrypt = createRequire(import.meta.url).resolve("bcryptjs");
    const w = keepHeapFlags(new Worker(WORKER_SOURCE, { eval: true, workerData: { bcrypt } }));
    w.unref();
    w.on("message", ({ id, ok }: { id: number; ok: boolean }) => {
      const p = this.pending.get(id);
      if (!p) return;
      this.pending.delete(id);
      p.resolve(ok === true);
    });
    const lost = (why: string) => {
      if (this.worker !== w) return;
      this.worker = null;
      this.failAll(new Error(`the password checker stopped (${why})`));
    };
    w.on("error", (e) => lost(e.message));
    w.on("exit", (code) => lost(`exit code ${code}`));
    this.worker = w;
    return w;
  }

  private failAll(e: Error): void {
    const all = [...this.pending.values()];
    this.pending.clear();
    for (const p of all) p.reject(e);
  }
}
