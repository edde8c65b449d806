/** Progress of a running deploy: the `progress` query's answer and the heartbeat of a polling step. */

/** Progress that a polling activity heartbeats, and the CLI shows. */
export interface WaitProgress {
  step: 'memory' | 'readiness';
  attempt: number;
  lastAnswer: string;
  elapsedS: number;
  timeoutS: number;
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
  steps: StepRecord[];
  done: boolean;
}
