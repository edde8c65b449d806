/** Progress of a running deploy: the `progress` query's answer and the heartbeat of a polling step. */

/** Progress that a polling activity heartbeats, and the CLI shows. */
export interface WaitProgress {
  step: 'memory' | 'readiness' | 'drain';
  attempt: number;
  lastAnswer: string;
  elapsedS: number;
  timeoutS: number;
  /** Readiness: the server's own phase, read from the tail of the container log (runtime/vllm/phase.ts). */
  phase?: ServerPhase | null;
  /** Readiness: the container log's last line (cut), shown when no known phase was seen yet. */
  lastLine?: string | null;
  /** Readiness: how long it usually takes on this node (from the workflow; absent when it has none). */
  estimate?: ReadinessEstimate;
  /**
   * Readiness: the wait's elapsed seconds when the server's phase or its log's last line last changed (absent from
   * older workers): elapsedS minus it is how long the server has not moved.
   */
  movedAtS?: number;
  /** Drain: the last sample's counts (running/waiting from /metrics, or the open connections of the fallback). */
  drain?: { source: 'metrics' | 'connections' | 'not-running'; running: number | null; waiting: number | null; connections: number | null };
}

/** Where a starting vLLM server is, from the lines it logs (runtime/vllm/phase.ts reads them). */
export interface ServerPhase {
  id: 'starting' | 'weights' | 'loaded' | 'compiling' | 'kv-cache' | 'cuda-graphs' | 'api-server';
  /** The words shown: `loading weights 23/38`, `CUDA graph capture 30/67`, `KV cache allocated (1,234,560 tokens)`. */
  words: string;
  /** Progress inside the phase (shards, graphs), when the line says it. */
  done?: number;
  total?: number;
}

/** One successful start's readiness wait, kept in the node state (runtime/vllm/readiness-eta.ts bounds the list). */
export interface ReadinessSample {
  profile: string;
  /** The .env identity's sha256 (runtime/model/plan.ts EnvIdentity). */
  sha256: string;
  /** Seconds from the start of the readiness wait to the first 200. */
  s: number;
  /** When it was recorded (ISO). */
  at: string;
}

/**
 * How long readiness usually takes on this node, from the readiness durations of earlier successful starts
 * (runtime/vllm/readiness-eta.ts): of the same .env identity when there are some, else of the same profile.
 */
export interface ReadinessEstimate {
  /** The estimate (median of the recent durations), or null for a first start of this profile on the node. */
  estimateS: number | null;
  /** How many earlier starts it is made of. */
  samples: number;
  basis: 'identity' | 'profile' | 'none';
}

/** One step as the `progress` query reports it. */
export interface StepRecord {
  /** preflight, mkdir, stop, memory, write-env, starting, start, readiness, verify, publish, compensate. */
  step: string;
  title: string;
  state: 'running' | 'ok' | 'failed';
  /** ISO time (workflow clock) the step began. */
  startedAt: string;
  ms: number | null;
  note?: string;
}

/**
 * The `progress` query of upWorkflow/downWorkflow. `wait` is never set by the workflow itself (it cannot see
 * heartbeats); worker/progress.ts `readDeployProgress(handle)` fills it from the pending activity's heartbeat.
 */
export interface DeployProgress {
  node: string;
  action: 'up' | 'down';
  /** The running step, or null between steps and after the end. */
  step: string | null;
  /** ISO time the workflow began. */
  startedAt: string;
  wait?: WaitProgress;
  /** The readiness estimate the 'starting' state step found (absent in deploys started before it existed). */
  readinessEstimate?: ReadinessEstimate;
  steps: StepRecord[];
  done: boolean;
}
