/**
 * The simulated vLLM's cold start as the release logs it (docs/SIMULATOR.md "Fidelity", vLLM table): the lines
 * pulse reads the server's phase from (runtime/vllm/phase.ts), spread over the node's ready delay in the shares a
 * real cold start of a large checkpoint on a GB10 takes (weights about half, torch.compile a fifth, the KV cache
 * and CUDA graph capture the rest), so a test's 300 ms start and a demo's 15-minute one show the same sequence.
 *
 * - weights: the loader's tqdm bar, whose bar format ends in a newline (vllm/model_executor/model_loader/
 *   weight_utils.py `_BAR_FORMAT`), so each update is its own log line; tqdm writes to stderr, `\r` first;
 * - `Loading weights took` (default_loader.py), `Model loading took X GiB [memory ]and N seconds` (gpu_model_runner.py);
 * - torch.compile (vllm/compilation/backends.py, monitor.py): the cache dir, Dynamo's transform time, the graph
 *   compile (`for dynamic shape` up to 0.11, `for compile range (1, N)` since), the total;
 * - the KV cache (worker: `Available KV cache memory`, kv_cache_utils.py: vllm-log.ts kvCacheLines);
 * - CUDA graph capture (gpu_model_runner.py capture_model): tqdm's default format (no newline: updates are
 *   `\r`-separated), so docker's json-file copier writes the line only when it ends (moby daemon/logger/copier.go
 *   splits on newlines); the per-mode desc since 0.11, `Capturing CUDA graph shapes` in 0.10;
 *   then `Graph capturing finished` and core.py's `init engine (...) took`.
 */
import type { ContainerLog } from './vllm-log.js';
import type { ReleaseTraits } from './vllm-release.js';

/** Safetensors shards of the simulated checkpoint, and CUDA graph sizes captured (max_num_seqs 8, spec decode). */
export const SHARDS = 38;
export const GRAPH_SIZES = 67;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));
const clock = (s: number) => `${String(Math.floor(s / 60)).padStart(2, '0')}:${String(Math.floor(s % 60)).padStart(2, '0')}`;

/** One update of a tqdm bar: `desc: 61% Completed | 23/38 [00:12<00:08,  1.89it/s]` (the loader's format). */
export function shardLine(k: number, n: number, elapsedS: number): string {
  const pct = String(Math.round((k / n) * 100)).padStart(3);
  const rate = k === 0 ? '?it/s' : `${(k / Math.max(elapsedS, 0.01)).toFixed(2)}it/s`;
  const left = k === 0 ? '?' : clock(((n - k) * elapsedS) / k);
  return `Loading safetensors checkpoint shards: ${pct}% Completed | ${k}/${n} [${clock(elapsedS)}<${left}, ${rate}]`;
}

/** One update of tqdm's default bar (10 cells on a non-tty): `desc:  45%|████▌     | 30/67 [00:02<00:02, 14.1it/s]`. */
export function graphLine(desc: string, k: number, n: number, elapsedS: number): string {
  const eighths = Math.round((k / n) * 80);
  const part = [' ', '▏', '▎', '▍', '▌', '▋', '▊', '▉'][eighths % 8] ?? ' ';
  const cells = `${'█'.repeat(Math.floor(eighths / 8))}${eighths < 80 ? part : ''}`.padEnd(10);
  const rate = k === 0 ? '?it/s' : `${(k / Math.max(elapsedS, 0.01)).toFixed(2)}it/s`;
  return `${desc}: ${String(Math.round((k / n) * 100)).padStart(3)}%|${cells}| ${k}/${n} [${clock(elapsedS)}<${k === 0 ? '?' : clock(((n - k) * elapsedS) / k)}, ${rate}]`;
}

/** Weights: the first 45 % of the ready delay. */
export async function logWeights(log: ContainerLog, t: ReleaseTraits, model: string, delayMs: number): Promise<void> {
  const t0 = Date.now();
  log.engine('gpu_model_runner.py:2602', `Starting to load model ${model}...`);
  const step = (delayMs * 0.45) / SHARDS;
  for (let k = 0; k <= SHARDS; k++) {
    if (k > 0) await sleep(step);
    log.write('stderr', `\r${shardLine(k, SHARDS, (Date.now() - t0) / 1000)}`, 'EngineCore');
  }
  const took = (Date.now() - t0) / 1000;
  log.engine('default_loader.py:262', `Loading weights took ${took.toFixed(2)} seconds`);
  const memory = t.version === '0.33.0' ? ' memory' : '';
  log.engine('gpu_model_runner.py:2653', `Model loading took 43.6128 GiB${memory} and ${took.toFixed(6)} seconds`);
}

/** torch.compile and the memory profile: 50 % to 72 % of the ready delay (the caller slept to 50 %). */
export async function logCompile(log: ContainerLog, t: ReleaseTraits, delayMs: number): Promise<void> {
  log.engine('backends.py:548', "Using cache directory: /root/.cache/vllm/torch_compile_cache/3f2a9c1d0e/rank_0_0/backbone for vLLM's torch.compile");
  await sleep(delayMs * 0.06);
  log.engine('backends.py:559', 'Dynamo bytecode transform time: 9.48 s');
  await sleep(delayMs * 0.12);
  const current = t.version === '0.33.0';
  log.engine('backends.py:218', current ? 'Compiling a graph for compile range (1, 16384) takes 20.50 s' : 'Compiling a graph for dynamic shape takes 28.96 s');
  await sleep(delayMs * 0.04);
  log.engine('monitor.py:34', current ? 'torch.compile and initial profiling/warmup run together took 34.69 s in total' : 'torch.compile takes 34.76 s in total');
  log.engine('gpu_worker.py:298', 'Available KV cache memory: 37.48 GiB');
}

/** CUDA graph capture (72 % to 95 %): one json-file line per capture mode, written when its bar closes. */
export async function logGraphs(log: ContainerLog, t: ReleaseTraits, delayMs: number): Promise<void> {
  const modes = t.version === '0.10.0' ? ['Capturing CUDA graph shapes'] : ['Capturing CUDA graphs (mixed prefill-decode, PIECEWISE)', 'Capturing CUDA graphs (decode, FULL)'];
  const t0 = Date.now();
  for (const desc of modes) {
    const m0 = Date.now();
    await sleep((delayMs * 0.23) / modes.length);
    const s = (Date.now() - m0) / 1000;
    const updates = Array.from({ length: GRAPH_SIZES + 1 }, (_, k) => `\r${graphLine(desc, k, GRAPH_SIZES, (s * k) / GRAPH_SIZES)}`);
    log.write('stderr', updates.join(''), 'EngineCore');
  }
  log.engine('gpu_model_runner.py:3480', `Graph capturing finished in ${Math.max(1, Math.round((Date.now() - t0) / 1000))} secs, took 0.52 GiB`);
  await sleep(delayMs * 0.02);
  log.engine('core.py:210', 'init engine (profile, create kv cache, warmup model) took 61.37 seconds');
}
