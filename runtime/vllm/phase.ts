/**
 * The phase of a starting vLLM server, read from the tail of its container log (issue 18 item 2). Pure: the
 * readiness probe sends back the last few KB of `docker logs` (runtime/scripts/readiness.sh) and this reads them.
 *
 * The lines are the ones vLLM prints on its way to serving, oldest release first where they differ (docs/SIMULATOR.md
 * "Fidelity" names the source files):
 * - weights: the model loader's tqdm bar `Loading safetensors checkpoint shards:  61% Completed | 23/38 [...]`
 *   (its bar format ends in a newline, so each update is a log line), then `Loading weights took N seconds` and
 *   `Model loading took X GiB [memory ]and N seconds` (the V0 engine: `Loading model weights took X GB`);
 * - compiling: `... for vLLM's torch.compile`, `Dynamo bytecode transform time`, `Compiling a graph for dynamic
 *   shape | compile range (...) takes N s`, `torch.compile takes N s in total` (current: `torch.compile and initial
 *   profiling/warmup run together took ...`);
 * - KV cache: `Available KV cache memory: X GiB`, `GPU KV cache size: N tokens` (V0: `# GPU blocks: N`);
 * - CUDA graphs: tqdm `Capturing CUDA graphs (mixed prefill-decode, PIECEWISE):  45%|████▌     | 30/67 [...]`
 *   (0.10: `Capturing CUDA graph shapes`; V0: `Capturing the model for CUDA graphs`), then `Graph capturing finished`;
 *   its default bar format has no newline, so updates are `\r`-separated inside one line that docker only writes
 *   once it ends or fills docker's 16 KB buffer;
 * - API server: `init engine (...) took`, `Starting vLLM API server`, uvicorn's `Application startup complete.`
 *
 * A line may carry a process prefix (`(EngineCore_DP0 pid=N)`, `(APIServer pid=N)`, ANSI-coloured in some
 * releases), a timestamp and a `[file.py:N]` source: the patterns match anywhere in a line. The latest known line
 * wins; unknown lines never change the phase, and a tail with none gives no phase (the caller keeps the one it had).
 */
import type { ServerPhase, WaitProgress } from '../model/index.js';

/** What one tail says: the phase of its latest known line, and its last line (no prefix, cut). */
export interface LogReading {
  phase: ServerPhase | null;
  lastLine: string | null;
}

/** The most of a tail that is read (the probe sends about this much; more is ignored from the front). */
export const TAIL_CHARS = 8192;
/** The last line is cut to this many characters (the live line cuts it again to the terminal). */
export const LAST_LINE_CHARS = 160;

const ANSI = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-_]?|\[[0-9;]*m/g;
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f]/g;
const PREFIX = /^\((?:APIServer|EngineCore(?:_DP\d+|_\d+)?|Worker[\w-]*|VllmWorker[\w-]*)\s+pid=\d+\)\s*/;
/** vLLM's logger head (`INFO 12-02 09:15:00 [file.py:123] `): dropped from the last line shown, the level kept unless INFO. */
const LOGGER = /^(DEBUG|INFO|WARNING|ERROR|CRITICAL)\s+\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?\s+(?:\[[^\]]*\]\s*)?/;

type Rule = [RegExp, (m: RegExpExecArray) => ServerPhase];

/** uvicorn's line once the app's startup ran: the server serves (or is about to, the socket's listen follows it). */
const STARTUP_COMPLETE = /Application startup complete/;

/** Whether a log line is uvicorn's "Application startup complete." (the readiness wait probes at once on it). */
export function isStartupComplete(line: string): boolean {
  return STARTUP_COMPLETE.test(line);
}

const n = (s: string | undefined): number => Number(s);
const counted = (id: ServerPhase['id'], what: string) => (m: RegExpExecArray): ServerPhase => ({ id, words: `${what} ${m[2]}/${m[3]}`, done: n(m[2]), total: n(m[3]) });

/** First matching rule of a segment decides it; the order puts the later phase first where two could match. */
const RULES: Rule[] = [
  [STARTUP_COMPLETE, () => ({ id: 'api-server', words: 'API server up' })],
  [/Starting vLLM API server|Started server process|Waiting for application startup|Uvicorn running on|init engine \(.*\) took/, () => ({ id: 'api-server', words: 'API server starting' })],
  [/Graph capturing finished/, () => ({ id: 'cuda-graphs', words: 'CUDA graphs captured' })],
  [/Capturing CUDA graph(?:s| shapes)\b[^:]*:\s*(\d+)%\|[^|]*\|\s*(\d+)\/(\d+)/, counted('cuda-graphs', 'CUDA graph capture')],
  [/Capturing CUDA graph|Capturing the model for CUDA graphs|Capturing cudagraphs/i, () => ({ id: 'cuda-graphs', words: 'CUDA graph capture' })],
  [/GPU KV cache size: ([\d,]+) tokens/, (m) => ({ id: 'kv-cache', words: `KV cache allocated (${m[1]} tokens)` })],
  [/# GPU blocks: (\d+)/, (m) => ({ id: 'kv-cache', words: `KV cache allocated (${m[1]} blocks)` })],
  [/Available KV cache memory: ([\d.]+) GiB/, (m) => ({ id: 'kv-cache', words: `sizing the KV cache (${m[1]} GiB free)` })],
  [/torch\.compile takes [\d.]+ s in total|torch\.compile (?:and .*)?took [\d.]+ s/, () => ({ id: 'compiling', words: 'compiled (torch.compile), profiling memory' })],
  [/Compiling a graph for|Dynamo bytecode transform time|for vLLM's torch\.compile|Cache the graph|Directly load the compiled graph/, () => ({ id: 'compiling', words: 'compiling (torch.compile)' })],
  [/Model loading took ([\d.]+) GiB|Loading model weights took ([\d.]+) GB/, (m) => ({ id: 'loaded', words: `weights loaded (${m[1] ?? m[2]} GiB)` })],
  [/Loading weights took [\d.]+ seconds/, () => ({ id: 'loaded', words: 'weights loaded' })],
  [/Loading (?:safetensors|pt|bin) checkpoint shards:\s*(\d+)% Completed \| (\d+)\/(\d+)/, counted('weights', 'loading weights')],
  [/Starting to load model|Loading model from scratch/, () => ({ id: 'weights', words: 'loading weights' })],
  [/vLLM API server version|non-default args|Initializing a V1 LLM engine|Initializing an LLM engine|Waiting for init message/, () => ({ id: 'starting', words: 'starting the engine' })],
];

/** The phase one log segment names, or null for a line vLLM prints in no known phase. */
export function phaseOfLine(line: string): ServerPhase | null {
  for (const [re, make] of RULES) {
    const m = re.exec(line);
    if (m) return make(m);
  }
  return null;
}

/** The segments of a tail, oldest first: lines, each split at its `\r`s (tqdm), escapes and prefixes removed. */
export function segmentsOf(tail: string): string[] {
  const text = tail.length > TAIL_CHARS ? tail.slice(-TAIL_CHARS) : tail;
  const out: string[] = [];
  for (const line of text.replace(ANSI, '').split('\n')) {
    for (const seg of line.split('\r')) {
      const s = seg.replace(CONTROL, '').trim().replace(PREFIX, '').trim();
      if (s !== '') out.push(s);
    }
  }
  return out;
}

/** Reads a container log's tail; never throws, whatever the text. */
export function readServerLog(tail: string | null | undefined): LogReading {
  if (typeof tail !== 'string' || tail === '') return { phase: null, lastLine: null };
  const segs = segmentsOf(tail);
  let phase: ServerPhase | null = null;
  for (let i = segs.length - 1; i >= 0 && phase === null; i--) phase = phaseOfLine(segs[i] ?? '');
  const last = segs.at(-1)?.replace(LOGGER, (_, level: string) => (level === 'INFO' || level === 'DEBUG' ? '' : `${level} `)) ?? null;
  return { phase, lastLine: last ? Array.from(last).slice(0, LAST_LINE_CHARS).join('') : null };
}

const IDS: readonly ServerPhase['id'][] = ['starting', 'weights', 'loaded', 'compiling', 'kv-cache', 'cuda-graphs', 'api-server'];
const short = (v: unknown, max: number): v is string => typeof v === 'string' && v.length <= max;
const count = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;

function checkedPhase(v: unknown): ServerPhase | null {
  const p = v as Partial<ServerPhase> | null;
  if (!p || typeof p !== 'object' || !IDS.includes(p.id as ServerPhase['id']) || !short(p.words, 200)) return null;
  return { id: p.id as ServerPhase['id'], words: p.words, ...(count(p.done) && count(p.total) ? { done: p.done, total: p.total } : {}) };
}

/**
 * The phase and last line a heartbeat carries (untrusted JSON: only well-formed, short values), as fields to spread:
 * a resumed readiness wait keeps them, and `status` shows them.
 */
export function serverLogOf(details: unknown): Pick<WaitProgress, 'phase' | 'lastLine'> {
  const d = details as { phase?: unknown; lastLine?: unknown } | null;
  const phase = checkedPhase(d?.phase);
  return { ...(phase ? { phase } : {}), ...(short(d?.lastLine, 400) ? { lastLine: d.lastLine } : {}) };
}
