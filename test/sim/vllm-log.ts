/**
 * The log lines of the simulated vLLM, as docs/ARCHITECTURE.md "What the simulated vLLM logs" specifies, written to
 * the process's stdout and stderr as vLLM writes them: vLLM's own logger to stdout, uvicorn's "Application startup
 * complete." to stderr. In a container the engine's json-file driver keeps them (one {log, stream, time} per line),
 * so `docker logs` is the real one.
 */
import fs from 'node:fs';
import { traitsOf } from './vllm-release.js';
import type { Process, ReleaseTraits } from './vllm-release.js';

/** Env var set to 1 → proof line, and mount-target suffix → proof line. */
export const ENV_PROOFS: Record<string, string> = {
  VLLM_MTP_DRAFT_FP8: 'MTP draft head: FP8 rowwise copy engaged',
  VLLM_BLOCK_DROP_BACKPORT: 'block-drop backport: enabled',
  VLLM_MTP_INDEX_SHARE: 'MTP index share: enabled',
  VLLM_MTP_CAPTURE_HIDDEN: 'MTP hidden-state capture: enabled',
};
export const MOUNT_PROOFS: Record<string, string> = { '/mtp-shard-r2': 'MTP shard r2: loaded' };

/**
 * Appends log lines to the container's json-file log, each with the process prefix the release writes (the
 * APIServer is this process; the EngineCore a child of it in real vLLM, so its pid is another).
 */
export class ContainerLog {
  private readonly traits: ReleaseTraits;
  constructor(release?: string) {
    this.traits = traitsOf(release);
  }

  private pid(proc: Process): number {
    return proc === 'APIServer' ? process.pid : process.pid + 1;
  }

  /** vLLM logger format: `[prefix]INFO 12-02 09:15:00 [file.py:123] message` (vllm/logger.py _FORMAT), on stdout. */
  info(source: string, message: string, level = 'INFO', proc: Process = 'APIServer'): void {
    const d = new Date();
    const p = (n: number) => String(n).padStart(2, '0');
    const stamp = `${p(d.getUTCMonth() + 1)}-${p(d.getUTCDate())} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())}`;
    this.append('stdout', `${this.traits.prefix(proc, this.pid(proc), true)}${level} ${stamp} [${source}] ${message}`);
  }

  /** A line of the EngineCore process. */
  engine(source: string, message: string, level = 'INFO'): void {
    this.info(source, message, level, 'EngineCore');
  }

  /** A raw line on the given stream (uvicorn, tracebacks), prefixed where the release wraps the stream itself. */
  write(stream: 'stdout' | 'stderr', line: string, proc: Process = 'APIServer'): void {
    this.append(stream, `${this.traits.prefix(proc, this.pid(proc), false)}${line}`);
  }

  private append(stream: 'stdout' | 'stderr', line: string): void {
    // One write per line, synchronous (a process.exit right after never loses it), as Python's logging flushes.
    let buf = Buffer.from(`${line}\n`);
    while (buf.length > 0) {
      try {
        buf = buf.subarray(fs.writeSync(stream === 'stdout' ? 1 : 2, buf));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw err; // a full pipe: the reader (the shim) drains it
      }
    }
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

/**
 * The KV cache report as the release logs it, as [file:line, text] pairs (vllm/v1/core/kv_cache_utils.py):
 * current releases in one line (`update_kv_cache_capacity`, tokens = int(concurrency × max_model_len)), older
 * ones in two, with thousands separators as Python's `{:,}` writes them.
 */
export function kvCacheLines(t: ReleaseTraits, tokens: number, maxLen: number): [string, string][] {
  const concurrency = tokens / maxLen;
  const fmt = (n: number) => n.toLocaleString('en-US');
  const maxLine = `Maximum concurrency for ${fmt(maxLen)} tokens per request: ${concurrency.toFixed(2)}x`;
  if (t.kvCacheOneLine) return [[t.kvSource[0], `GPU KV cache size: ${fmt(Math.floor(concurrency * maxLen))} tokens, ${maxLine}`]];
  return [[t.kvSource[0], `GPU KV cache size: ${fmt(tokens)} tokens`], [t.kvSource[1], maxLine]];
}
