/**
 * Per-node controls that the simulated programs (vLLM, the GPU hook, nvidia-smi) read when they run. The test process
 * writes them through SimNode; the node-side programs only read. Bash assets use plain marker files instead
 * (sudo-ok, stop-mode, ready-poll-s) so they need no JSON parser.
 */
import fs from 'node:fs';
import path from 'node:path';
import { CURRENT_RELEASE } from './vllm-release.js';
import type { VllmRelease } from './vllm-release.js';

/** How the simulated vLLM misbehaves. `none` is a healthy server. */
export type FailureMode =
  | 'none'
  /** Exits with an error shortly after it starts (bad flag, CUDA error). */
  | 'crash-at-start'
  /** Logs the startup lines but never listens (stuck in compile / weight load). */
  | 'never-ready'
  /** Serves a model id other than --served-model-name. */
  | 'wrong-model'
  /** Reports a max_model_len other than --max-model-len. */
  | 'wrong-max-len'
  /** Answers, but every response waits `slowMs`. */
  | 'slow'
  /** Dies (exit 1) half-way through its ready delay. */
  | 'die-during-readiness'
  /**
   * vLLM's start-up memory guard refuses (vllm-project/vllm#48140: on unified memory the page cache counts as used):
   * `ValueError: Free memory on device ... on startup is less than desired GPU memory utilization`, exit 1.
   */
  | 'page-cache-held';

export interface NodeControl {
  failure: FailureMode;
  /** Time from container start to listening on the port. */
  readyDelayMs: number;
  /** Response delay in `slow` mode. */
  slowMs: number;
  /** nvidia-smi hides the vLLM process (seen on spark2). */
  nvidiaSmiHidesContainers: boolean;
  /**
   * The GPU driver is broken: the stand-in nvidia-container-runtime-hook fails every `--gpus` start with
   * nvidia-container-cli's "initialization error: nvml error: driver not loaded" (read at each start).
   */
  gpuDriverBroken: boolean;
  /** The vLLM release the next started server behaves as: log and error formats, reasoning field (vllm-release.ts). */
  vllmRelease: VllmRelease;
  /** The model thinks, and the server splits its reasoning off with this parser (as `--reasoning-parser` does). */
  reasoningParser: 'qwen3' | 'deepseek_r1' | null;
  /** VLLM_API_KEY set in the image's own environment: the server wants a key that the node .env does not give. */
  imageApiKey: string | null;
  /** A test's hold: the next started server loads, then waits to listen until this is false again (read live). */
  holdReady: boolean;
  /**
   * A test's hold inside the cold start: the next started server, its weights loaded and compiled, logs the KV cache
   * sizing and then waits (in that phase, before the KV cache lines and the CUDA graphs) until this is false (read live).
   */
  holdPhase: boolean;
  /**
   * The engine core died while the API server still answers (EngineDeadError): GET /health answers 503, /v1/models
   * still 200 (it needs no engine). Read live by a running server, on every request; a server started while it is
   * already true has a new engine (a restart heals it), until it goes false and true again.
   */
  engineDead: boolean;
  /**
   * How long one chat completion takes to generate (ms; 0 = at once). A streamed one (`"stream": true`) sends its
   * tokens spread over this time, so it stays in flight (vllm:num_requests_running) until its last chunk. Read when
   * the request comes in.
   */
  generationMs: number;
  /**
   * A test's hold on the completions in flight: each one, its tokens sent, waits before its last chunk (and a plain
   * one before its answer) until this is false again (read live). A long generation, without a race against a clock.
   */
  holdGeneration: boolean;
  /** The server serves no GET /metrics (404), as a build without the Prometheus page (an older one) does. */
  metricsMissing: boolean;
  /**
   * A test's lie on GET /metrics (read live): the scheduler gauges' values written as given (`-2.0`, `NaN`, `+Inf`)
   * instead of the true counts, and/or another model_name label. No vLLM writes such a page; a broken exporter, a
   * proxy in front of it or another server on the port can, and pulse must not read it as idle.
   */
  metricsLie: MetricsLie | null;
}

/** What a lying /metrics page shows in place of the truth (vllm-metrics.ts metricsPage). */
export interface MetricsLie {
  running?: string;
  waiting?: string;
  modelName?: string;
}

export const DEFAULT_CONTROL: NodeControl = {
  failure: 'none',
  readyDelayMs: 300,
  slowMs: 2000,
  nvidiaSmiHidesContainers: false,
  gpuDriverBroken: false,
  vllmRelease: CURRENT_RELEASE,
  reasoningParser: null,
  imageApiKey: null,
  holdReady: false,
  holdPhase: false,
  engineDead: false,
  generationMs: 0,
  holdGeneration: false,
  metricsMissing: false,
  metricsLie: null,
};

/** Reads the control file of the node whose sim state dir is `stateDir` (defaults when absent or broken). */
export function readControl(stateDir: string): NodeControl {
  try {
    const raw = JSON.parse(fs.readFileSync(path.join(stateDir, 'control.json'), 'utf8')) as Partial<NodeControl>;
    return { ...DEFAULT_CONTROL, ...raw };
  } catch {
    return { ...DEFAULT_CONTROL };
  }
}

/** Merges `patch` into the control file, atomically (temp + rename) so a starting container never reads half. */
export function writeControl(stateDir: string, patch: Partial<NodeControl>): NodeControl {
  const next = { ...readControl(stateDir), ...patch };
  const file = path.join(stateDir, 'control.json');
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(next, null, 2));
  fs.renameSync(tmp, file);
  return next;
}

/** Appends one JSON line to a sim log file (request log, probe calls). */
export function appendJsonLine(file: string, value: unknown): void {
  fs.appendFileSync(file, `${JSON.stringify(value)}\n`);
}

/** Reads a JSON-lines file written by appendJsonLine ([] when absent). */
export function readJsonLines<T>(file: string): T[] {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as T);
}
