/**
 * What the activities need from the outside, injected by the worker (worker/deps.ts builds the real ones) so the
 * tests can build the same factory with fakes where a fake is honest.
 */
import type { NodeSession, NodeTarget } from '../runtime/node/types.js';
import type * as Steps from '../runtime/steps/index.js';
import type { FleetEntry, NodeState } from '../runtime/model/index.js';
import type { GatewayEndpoint } from '../runtime/gateway/gateway.js';
import type { WorkerFilesSource } from './authority.js';
import type { WorkflowInputReader } from './workflow-input.js';
import type { DeployRun } from '../runtime/fleet/rollout.js';

/** Access to nodes: a session that borrows one pooled connection per node (runtime/node/connect.ts NodePool). */
export interface NodeAccess {
  session(target: NodeTarget): NodeSession;
}

/** The typed step functions of runtime/steps (the real module in production). */
export type StepFunctions = Pick<
  typeof Steps,
  'runPreflight' | 'makeDirs' | 'sampleDrain' | 'stopServer' | 'sampleMemory' | 'writeEnv' | 'startServer' | 'probeReadiness' | 'followServerLog' | 'verifyServer' | 'nodeLock'
>;

/** Node state and gateway fragment (runtime/state/state.ts in production). */
export interface StateStore {
  writeNodeState(stateDir: string, state: NodeState): Promise<unknown>;
  readNodeState(stateDir: string, node: string): Promise<NodeState | null>;
  /** `endpoints`: the file's endpoints as written (the closing block says the node's). */
  publishFragment(stateDir: string, fleet: FleetEntry[]): Promise<{ changed: boolean; warnings: string[]; endpoints?: readonly GatewayEndpoint[] }>;
}

export interface ActivityLogger {
  info(message: string, meta?: Record<string, unknown>): void;
  warn(message: string, meta?: Record<string, unknown>): void;
}

export interface ActivityDeps {
  nodes: NodeAccess;
  steps: StepFunctions;
  state: StateStore;
  stateDir: string;
  /** The worker's own nodes.json and profiles: the authority over what every activity runs (activities/authority.ts). */
  files: WorkerFilesSource;
  /**
   * Reads the input of the workflow the current activity runs for: the plan of the steps that get an UpInputRef
   * (default: activities/workflow-input.ts workerInputReader, over the worker's client).
   */
  workflowInput?: WorkflowInputReader;
  /**
   * What the availability guard asks Temporal: is a node's deploy open, is a reservation's rollout still open
   * (activities/rollout.ts workerWorkflowRuns over the worker's client; absent: nothing runs, as in the mock tests).
   */
  workflowRuns?: WorkflowRuns;
  /**
   * `now`: wall time (ms), only for timestamps people read (the node state's `at`). `monotonic`: a clock that never
   * jumps (performance.now in production), for every duration: a wait's budget is the sum of the elapsed monotonic
   * time of its attempts (activities/wait-loop.ts), so neither a wall-clock step nor another worker's skewed clock moves it.
   */
  clock: { now(): number; monotonic(): number };
  logger: ActivityLogger;
  /** Time between two probes of a wait (default 1000 ms: readiness must be noticed within about a second). */
  pollIntervalMs?: number;
  /**
   * Readiness: time between two periodic probes, the fallback of the followed log's startup line (default 3 ×
   * pollIntervalMs). A test sets it long to show the line alone ends the wait.
   */
  readinessProbeMs?: number;
  /** Sleep between probes (default: the activity's cancellation-aware sleep; the time-skipping tests skip time). */
  sleep?: (ms: number) => Promise<void>;
  /** The node lock's lease in seconds (default LOCK_LEASE_S, 120; $PULSE_LOCK_LEASE_S for the worker). */
  lockLeaseS?: number;
  /** The controller host a lock names (default os.hostname()). */
  controllerHost?: string;
  /** Aborted when the worker begins a graceful shutdown: the waits hand themselves back at once (activities/wait-loop.ts). */
  stopping?: AbortSignal;
  /** Heartbeat period while a node script runs (default 5000 ms, well inside the 30 s heartbeat timeout). */
  heartbeatEveryMs?: number;
}

/**
 * What the availability guard asks Temporal (the worker's own client in production: activities/rollout.ts
 * workerWorkflowRuns; a fake in tests). Here, with the other dependencies, so activities/rollout.ts and this file do
 * not import each other.
 */
export interface WorkflowRuns {
  /** The latest run of the node's deploy workflow (its lock, `pulse-model-<node>`) and whether it is open; null when none ever ran. */
  latest(node: string): Promise<DeployRun | null>;
  /** Whether that run is still open (false once closed, or unknown to the server). */
  open(workflowId: string, runId: string): Promise<boolean>;
}
