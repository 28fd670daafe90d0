/**
 * Bounds of the `expo` builder's heavy steps (docs/builders.md "`expo` (default): real Expo apps",
 * docs/security.md "The build sandbox"): a type check or an export that goes past them is stopped, fails with the
 * reason, and frees its heavy-step slot, so that no tenant holds the build machine. Each bound is
 * a few times what a normal app needs (measured on the template and the bench's apps, docs/performance.md
 * "The `expo` builder").
 */
import type { ProcessResult } from './run-process.js';

/** Bounds of one heavy step. */
export interface StepBounds {
  /** Wall-clock limit of the step, ms (then stopped: SIGTERM, SIGKILL). */
  timeoutMs: number;
  /** CPU time of each of its processes, seconds (`prlimit --cpu`: SIGXCPU past it). */
  cpuSeconds: number;
  /** V8 heap (old space) of each of its Node processes, MiB (`--max-old-space-size`). */
  heapMb: number;
  /** Data memory of each of its processes, bytes (`prlimit --data`), a little above the heap. */
  memoryBytes: number;
}

const MiB = 1024 ** 2;

/**
 * `tsc --noEmit`: the template checks in 3-4 s of CPU with a heap under 200 MiB, and the largest
 * answer allowed (40 files, 200,000 bytes) adds little to that: the React Native types dominate.
 */
export const TYPE_CHECK_BOUNDS: StepBounds = {
  timeoutMs: 120_000,
  cpuSeconds: 120,
  heapMb: 1024,
  memoryBytes: 2048 * MiB,
};

/**
 * `expo export`: a cold native (Hermes) export takes about 80 s and its largest process about
 * 410 MiB; a warm one 15 s.
 */
export const EXPORT_BOUNDS: StepBounds = { timeoutMs: 600_000, cpuSeconds: 300, heapMb: 2048, memoryBytes: 3072 * MiB };

/** The heap bound as Node takes it on its command line or in `NODE_OPTIONS`. */
export function heapFlag(bounds: StepBounds): string {
  return `--max-old-space-size=${bounds.heapMb}`;
}

/** SIGXCPU (24 on Linux): the CPU bound; bwrap reports a child it lost to a signal as 128 + the signal. */
const SIGXCPU = 24;
const OUT_OF_MEMORY =
  /heap out of memory|Reached heap limit|Fatal process out of memory|Cannot allocate|ENOMEM|std::bad_alloc/i;

/**
 * Which bound, if any, a step's process went past, said for the user: `null` when it ended on its
 * own (success or an ordinary failure).
 * @param step what ran, as the sentence's subject (`tsc --noEmit`, `The web export`).
 */
export function boundPassed(result: ProcessResult, bounds: StepBounds, step: string): string | null {
  if (result.timedOut)
    return `${step} ran longer than its bound of ${Math.round(bounds.timeoutMs / 1000)} s and was stopped`;
  if (result.code === 0) return null;
  if (result.signal === 'SIGXCPU' || result.code === 128 + SIGXCPU) {
    return `${step} used more than its bound of ${bounds.cpuSeconds} s of CPU time and was stopped`;
  }
  // Out of memory, V8 aborts (SIGABRT); a process that merely printed such words exits by itself.
  const killed = result.signal !== null || (result.code ?? 0) >= 128;
  if (killed && result.tail.some((line) => OUT_OF_MEMORY.test(line))) {
    return `${step} needed more than its memory bound (${bounds.heapMb} MiB of JavaScript heap, ${Math.round(bounds.memoryBytes / MiB)} MiB of data per process) and was stopped`;
  }
  return null;
}

/** The bounds with a wall-clock limit set by the operator (`stepTimeoutMs`), when there is one. */
export function withTimeout(bounds: StepBounds, timeoutMs: number | undefined): StepBounds {
  return timeoutMs === undefined ? bounds : { ...bounds, timeoutMs };
}
