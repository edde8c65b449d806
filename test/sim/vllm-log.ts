/**
 * The log lines of the simulated vLLM, as docs/ARCHITECTURE.md "What the simulated vLLM logs" specifies, written
 * in docker's json-file shape (one {stream, log, time} per line) so `docker logs` keeps stdout and stderr apart:
 * vLLM's own logger writes to stdout, uvicorn's "Application startup complete." to stderr.
 */
import fs from 'node:fs';
import path from 'node:path';

/** Env var set to 1 → proof line, and mount-target suffix → proof line. */
export const ENV_PROOFS: Record<string, string> = {
  VLLM_MTP_DRAFT_FP8: 'MTP draft head: FP8 rowwise copy engaged',
  VLLM_BLOCK_DROP_BACKPORT: 'block-drop backport: enabled',
  VLLM_MTP_INDEX_SHARE: 'MTP index share: enabled',
  VLLM_MTP_CAPTURE_HIDDEN: 'MTP hidden-state capture: enabled',
};
export const MOUNT_PROOFS: Record<string, string> = { '/mtp-shard-r2': 'MTP shard r2: loaded' };

/** Appends log lines to the container's json-file log. */
export class ContainerLog {
  private readonly file: string;
  constructor(containerDir: string) {
    this.file = path.join(containerDir, 'log.jsonl');
  }

  /** vLLM logger format: `INFO 12-02 09:15:00 [file.py:123] message`. */
  info(source: string, message: string, level = 'INFO'): void {
    const d = new Date();
    const p = (n: number) => String(n).padStart(2, '0');
    const stamp = `${p(d.getUTCMonth() + 1)}-${p(d.getUTCDate())} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())}`;
    this.write('stdout', `${level} ${stamp} [${source}] ${message}`);
  }

  /** A raw line on the given stream (uvicorn, tracebacks). */
  write(stream: 'stdout' | 'stderr', line: string): void {
    fs.appendFileSync(this.file, `${JSON.stringify({ stream, log: `${line}\n`, time: new Date().toISOString() })}\n`);
  }
}

/** KV cache size in tokens from the memory share, like vLLM's profiling run would find it on a 128 GB GB10. */
export function kvCacheTokens(gpuMemUtil: number, kvDtype: string): number {
  const usableGiB = Math.max(1, gpuMemUtil * 119.7 - 48.5);
  const bytesPerToken = kvDtype.startsWith('fp8') ? 24 * 1024 : 48 * 1024;
  return Math.floor((usableGiB * 2 ** 30) / bytesPerToken / 16) * 16;
}

/** Proof lines that follow from the container env and mounts. */
export function proofLines(env: NodeJS.ProcessEnv, mountTargets: string[]): string[] {
  const lines = Object.entries(ENV_PROOFS)
    .filter(([k]) => env[k] === '1')
    .map(([, line]) => line);
  for (const [suffix, line] of Object.entries(MOUNT_PROOFS)) if (mountTargets.some((t) => t.endsWith(suffix))) lines.push(line);
  return lines;
}
