/**
 * What the simulated vLLM knows of the requests it is serving: the two scheduler gauges of its Prometheus page
 * (GET /metrics) and a record of every completion in flight, so a test can count the requests a stop cut.
 *
 * The page follows vllm/v1/metrics/loggers.py (PrometheusStatLogger): `vllm:num_requests_running` ("Number of requests
 * in model execution batches.") and `vllm:num_requests_waiting` ("Number of requests waiting to be processed."), both
 * gauges labelled `model_name` (the first served name) and `engine` (the engine index, "0" on one GPU), written by
 * prometheus_client's text exposition (labels sorted by name, values as Python floats: `3.0`). The scheduler runs at
 * most --max-num-seqs requests at once (vLLM's default 256 in the sim); the rest wait.
 *
 * The cut record is a file under the node's sim state dir (SIM_STATE/inflight.jsonl): a `begin` line when a
 * completion starts, an `end` line when its last byte went out (or its client went away), a `cut` line for each one
 * the shutdown answered with finish_reason "abort" (vllm.ts) or still running when the process exits. A SIGKILLed server writes no `cut` line: a `begin` with no `end` counts as cut
 * too, so the count holds wherever the server runs (a process here, or a container with the state dir bind-mounted).
 */
import fs from 'node:fs';
import path from 'node:path';
import { appendJsonLine, readJsonLines } from './control.js';
import type { MetricsLie } from './control.js';

/** vLLM's SchedulerConfig default for max_num_seqs on the V1 engine (api server, one GPU). */
export const DEFAULT_MAX_NUM_SEQS = 256;

export interface InflightRecord {
  event: 'begin' | 'end' | 'cut';
  id: string;
  at: string;
  /** `begin`: whether the client asked for a stream. */
  stream?: boolean;
  /** `cut`: `abort` when the shutdown answered it with finish_reason "abort" (absent: the process exited under it). */
  reason?: 'abort';
}

const FILE = 'inflight.jsonl';

/** The completions this process is generating (ids), in the order they came. */
export class Inflight {
  private readonly live = new Set<string>();
  private seq = 0;

  constructor(
    private readonly stateDir: string,
    private readonly maxNumSeqs: number,
  ) {}

  /** A completion begins: its id, recorded before the first byte of its answer. */
  begin(stream: boolean): string {
    const id = `${process.pid}-${++this.seq}`;
    this.live.add(id);
    appendJsonLine(path.join(this.stateDir, FILE), { event: 'begin', id, at: new Date().toISOString(), stream } satisfies InflightRecord);
    return id;
  }

  /** It finished (or its client left): no longer in flight. */
  end(id: string): void {
    if (!this.live.delete(id)) return;
    appendJsonLine(path.join(this.stateDir, FILE), { event: 'end', id, at: new Date().toISOString() } satisfies InflightRecord);
  }

  /** The shutdown aborted it (its answer ended with finish_reason "abort"): a `cut` line, the stop cut it. */
  abort(id: string): void {
    if (!this.live.delete(id)) return;
    appendJsonLine(path.join(this.stateDir, FILE), { event: 'cut', id, at: new Date().toISOString(), reason: 'abort' } satisfies InflightRecord);
  }

  /** How many are in flight. */
  get size(): number {
    return this.live.size;
  }

  /** The process exits: every completion still running is cut (synchronous: it runs in the 'exit' handler). */
  cutAll(): void {
    for (const id of this.live) appendJsonLine(path.join(this.stateDir, FILE), { event: 'cut', id, at: new Date().toISOString() } satisfies InflightRecord);
    this.live.clear();
  }

  get running(): number {
    return Math.min(this.live.size, this.maxNumSeqs);
  }

  get waiting(): number {
    return Math.max(0, this.live.size - this.maxNumSeqs);
  }
}

/** prometheus_client's float format: `3.0`, `0.0`. */
function pyFloat(n: number): string {
  return Number.isInteger(n) ? `${n}.0` : String(n);
}

/** prometheus_client's label value escaping (backslash, newline, double quote). */
function label(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

/**
 * The page GET /metrics answers (content type text/plain; version=0.0.4), with the gauges pulse reads; a test's `lie`
 * (control.ts metricsLie) replaces their values or their model label.
 */
export function metricsPage(modelName: string, running: number, waiting: number, lie: MetricsLie | null = null): string {
  const labels = `{engine="0",model_name="${label(lie?.modelName ?? modelName)}"}`;
  return [
    '# HELP vllm:num_requests_running Number of requests in model execution batches.',
    '# TYPE vllm:num_requests_running gauge',
    `vllm:num_requests_running${labels} ${lie?.running ?? pyFloat(running)}`,
    '# HELP vllm:num_requests_waiting Number of requests waiting to be processed.',
    '# TYPE vllm:num_requests_waiting gauge',
    `vllm:num_requests_waiting${labels} ${lie?.waiting ?? pyFloat(waiting)}`,
    '# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.',
    '# TYPE vllm:kv_cache_usage_perc gauge',
    `vllm:kv_cache_usage_perc${labels} ${pyFloat(Math.min(1, (running + waiting) / 64))}`,
    '',
  ].join('\n');
}

/** The in-flight records of a node's sim state dir. */
export function inflightRecords(stateDir: string): InflightRecord[] {
  return readJsonLines<InflightRecord>(path.join(stateDir, FILE));
}

/** How many completions ever began, finished, and were cut by a stop (a `cut` line, or a `begin` with no `end`). */
export function inflightCounts(stateDir: string): { begun: number; finished: number; cut: number } {
  const recs = inflightRecords(stateDir);
  const ended = new Set(recs.filter((r) => r.event === 'end').map((r) => r.id));
  const begun = recs.filter((r) => r.event === 'begin');
  return { begun: begun.length, finished: ended.size, cut: begun.filter((r) => !ended.has(r.id)).length };
}

/** Empties the record (a test's or a bench round's fresh start). */
export function clearInflight(stateDir: string): void {
  fs.writeFileSync(path.join(stateDir, FILE), '');
}
