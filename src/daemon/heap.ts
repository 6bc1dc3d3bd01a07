/**
 * V8 heap sizing for the long-lived daemon, applied when this module is
 * evaluated. main.ts imports it first, so it runs before fastify, SQLite and
 * the config loader allocate anything.
 *
 * V8 doubles the young generation (up to two 16 MiB semi-spaces) whenever
 * many objects survive a scavenge, which is what loading svc.yaml looks like
 * (every job's config survives). It keeps that size afterwards: 32 MiB of
 * resident memory, mostly empty, for a daemon that then allocates a few KB a
 * second. With a growth factor of 1 the young generation keeps its initial
 * size; the survivors of the startup burst go to the old generation, where
 * they belong anyway: a smaller RSS, the same startup time (figures:
 * docs/PERFORMANCE.md, Fixes, "Memory: V8's young generation stayed at 2 x 16 MiB after startup").
 */
import { applyHeapFlags } from "../shared/heapFlags.js";

// Worker threads reset it: each is started through keepHeapFlags (shared/heapFlags.ts).
applyHeapFlags();
