export type {
  ExitInfo,
  OutputCapture,
  OutStream,
  ProcessHandle,
  SpawnSpec,
  StartOptions,
  TimedExitInfo,
  TimedProcessHandle,
  TimedStartOptions,
} from "./types.js";
export { startProcess, DEFAULT_DRAIN_MS } from "./startProcess.js";
export { runWithTimeout } from "./runWithTimeout.js";
export { createLineSplitter, DEFAULT_MAX_LINE_BYTES, type LineSplitter } from "./lineSplitter.js";
export { processStartTime, isProcessAlive, isGroupAlive, ownsGroup, killGroup } from "./liveness.js";
export { createOutputCapture, checkOutputMode } from "./outputs.js";
export { spawnMethod } from "./posixSpawn.js";
