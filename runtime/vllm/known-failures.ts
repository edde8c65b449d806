/**
 * vLLM failures pulse knows by their log line, each with what it means on these nodes and what relieves it, so the
 * failure block (cli/failure-block.ts) names it instead of a generic "the server failed". Pure: it reads lines.
 *
 * - vllm-project/vllm#48140: at start, vLLM's memory guard (the worker's init_device, vllm/v1/worker/gpu_worker.py,
 *   from a MemorySnapshot) raises `ValueError: Free memory on device[ cuda:0] (x/y GiB) on startup is less than desired GPU
 *   memory utilization (u, z GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.`
 *   On unified memory (DGX Spark) the "device" memory is the host's, and the page cache counts as used: a node whose
 *   MemAvailable is fine refuses the start while cached file pages hold the memory. The recipe's relief is
 *   MEMWATCH_RELIEF=drop_caches (the shipped best, datagen and capture set it; it needs sudo -n on the node), or
 *   dropping the page cache by hand before the next up.
 */

export interface KnownFailure {
  /** A stable id (the --json failure block carries it). */
  id: string;
  /** One line: what happened, with the numbers of the log line. */
  summary: string;
  /** What to do about it. */
  relief: string;
  /** The log line it was read from (cut). */
  line: string;
}

const FREE_MEMORY = /Free memory on device(?: \S+)? \(([\d.]+)\/([\d.]+) GiB\) on startup is less than desired GPU memory utilization \(([\d.]+), ([\d.]+) GiB\)/;

/** The first known failure in `lines` (a container log's tail, oldest first), or null. */
export function knownFailure(lines: readonly string[]): KnownFailure | null {
  for (const line of lines) {
    const m = FREE_MEMORY.exec(line);
    if (!m) continue;
    const [, free, total, util, wanted] = m;
    return {
      id: 'vllm-48140',
      summary: `vLLM refused to start: ${free} of ${total} GiB free at start, less than --gpu-memory-utilization ${util} asks for (${wanted} GiB). On unified memory (DGX Spark) the page cache counts as used: a known vLLM failure (vllm-project/vllm#48140)`,
      relief: "relief: the recipe's MEMWATCH_RELIEF=drop_caches in the profile (needs sudo -n on the node), or drop the page cache on the node (sync; echo 1 | sudo tee /proc/sys/vm/drop_caches) and run the up again",
      line: line.length > 300 ? `${line.slice(0, 297)}...` : line,
    };
  }
  return null;
}
