/**
 * The stable shape of `pulse model status --json` (docs/STATUS.md). Fields are added, never renamed or removed,
 * without a new `version`. Every field is present on every node; what could not be learned is null, with a note
 * saying why.
 */
import type { LastKnownGood, NodeLock, WatchdogRecord, NodeStateKind, ReadinessEstimate, ServerPhase } from '../model/index.js';
import type { LogConfigStatus } from './log-config.js';
import type { TunnelStatus } from '../gateway/tunnel/health.js';

export type { LogConfigStatus } from './log-config.js';

export const STATUS_JSON_VERSION = 1;

/** The one health word of a node (runtime/status/verdict.ts decides it). */
export type HealthWord =
  /** The server answers /v1/models with 200 and /health with 200, its node state is not failed, and no watchdog holds it down. */
  | 'serving'
  /** The container runs; no request was sent (--no-http, protected node without --yes). */
  | 'running'
  /** The container runs and the server does not answer yet, while its up is still waiting for it. */
  | 'starting'
  /** A deploy holds the node now (its step is in the DEPLOY column). */
  | 'deploying'
  /** No server, and none is expected: the last deploy was a down, or pulse never deployed here. */
  | 'stopped'
  /** The container runs but the server is not healthy (/v1/models or /health not 200, or the watchdog took its endpoint away), and no deploy waits for it. */
  | 'failing'
  /** The last deploy failed (node state failed): not serving, even if a server answers (its endpoint is disabled). */
  | 'failed'
  /** The last up left a server here, and its container is gone or stopped. */
  | 'down'
  /** The node did not answer. */
  | 'unreachable';


export interface ContainerStatus {
  name: string;
  exists: boolean;
  running: boolean;
  /**
   * docker's State.Status as docker names it: created, running, paused, restarting, removing, exited, dead; or
   * `absent` (docker says there is none), or `unknown` (the Docker daemon does not answer: NodeStatus.dockerDown).
   */
  state: string;
  /** State.StartedAt; null when it never started (docker's zero time 0001-01-01T00:00:00Z). */
  startedAt: string | null;
  image: string | null;
  /** State.ExitCode: the last exit (0 while it never exited); null when absent. */
  exitCode: number | null;
  /** What the last exit means, in words; null when it runs and never exited (or is absent). */
  exitMeaning: string | null;
  /** RestartCount: restarts done by the restart policy. */
  restartCount: number | null;
  /** State.FinishedAt: when its last run ended; null while it never ended (docker's zero time). */
  finishedAt: string | null;
  oomKilled: boolean;
  /**
   * State.Error, or null: why docker could not start it (a failing OCI hook such as the NVIDIA one, a missing
   * entrypoint: the container stays `created`, never started), or why a removal failed and left it dead.
   */
  error: string | null;
  /** HostConfig.LogConfig as the daemon merged it, and what it means; null when absent or unreadable. */
  logs: LogConfigStatus | null;
}

export interface EnvStatus {
  path: string;
  exists: boolean;
  /** The file has a complete pulse header. */
  renderedByPulse: boolean;
  profile: string | null;
  node: string | null;
  recipe: string | null;
  overlay: string | null;
  rendered: string | null;
  /** The header's pulse-sha256. */
  sha256: string | null;
  /** The body no longer matches pulse-sha256 (somebody edited the file). Carried secret lines do not count. */
  drift: boolean;
}

export interface HealthStatus {
  /** A request was sent. false: see `skipped`. */
  checked: boolean;
  /** Why no request was sent (--no-http, protected node without --yes, node unreachable). */
  skipped: string | null;
  httpStatus: number | null;
  /**
   * The server answers healthy: /v1/models 200 with a model AND, when it was asked, GET /health 200. One answer for
   * a script reading `.health.ok`: vLLM keeps answering /v1/models with a dead engine, so that answer alone is not it.
   */
  ok: boolean;
  /** /v1/models answered 200 with at least one model (whatever /health said). */
  modelsOk: boolean;
  servedModels: string[];
  maxModelLen: number | null;
  detail: string | null;
  /** GET /health's code, when it was asked (status and the watchdog ask wherever HTTP is allowed): 200 alive, 503 engine dead, 0 no answer. */
  healthRoute?: number;
}

export interface KvCacheStatus {
  line: string | null;
  /** The numbers of the line: KV cache size in tokens, and the maximum concurrency for `concurrencyForTokens`. */
  tokens: number | null;
  concurrency: number | null;
  concurrencyForTokens: number | null;
  /** `log`: read from the container log now; `state`: the value `up` saved (the log was rotated); null: none. */
  source: 'log' | 'state' | null;
}

export interface MemoryStatus {
  availableGiB: number | null;
  totalGiB: number | null;
  gateGiB: number;
  /** MemAvailable is at or above the gate. */
  atGate: boolean | null;
  watermarkScaleFactor: number | null;
  /** Set when the factor is high enough that the gate may be unreachable (RUNTIME.md, Known limits). */
  warning: string | null;
}

export interface GpuProcess {
  pid: number | null;
  name: string;
  usedMiB: number | null;
}

export interface LastDeploy {
  state: NodeStateKind;
  action: 'up' | 'down';
  profile: string | null;
  at: string;
  error: string | null;
}

export interface DeployInProgress {
  workflowId: string;
  runId: string | null;
  action: string | null;
  profile: string | null;
  step: string | null;
  /** The running step's number and the deploy's step count (7 and 9 for `7/9 readiness`), when the deploy says. */
  stepIndex: number | null;
  stepCount: number | null;
  elapsedS: number | null;
  /** The wait of a polling step (memory, readiness): seconds waited of its budget, from the activity's heartbeat. */
  wait: { step: string; elapsedS: number; timeoutS: number; attempt: number; phase?: ServerPhase | null; lastLine?: string | null; estimate?: ReadinessEstimate } | null;
  /** How long readiness usually takes on the node (the deploy's 'starting' state step found it); absent when unknown. */
  readinessEstimate?: ReadinessEstimate | null;
  uiUrl: string | null;
  /** Why no worker can run it now (none polls its task queue, or none of the build it is pinned to); null: one can, or unknown. */
  unserved?: string | null;
}

/** The node's endpoint in the gateway backend file (runtime/status/endpoint.ts): whether the gateway sends it traffic. */
export interface EndpointStatus {
  enabled: boolean;
  /** Enabled only by the all-disabled fallback (the gateway rejects a model with no enabled endpoint): not really serving. */
  fallback: boolean;
  /** The file's reason: why it is disabled (or kept enabled by the fallback); null on a plainly enabled one. */
  reason: string | null;
  /** The gateway backend file it was read from. */
  file: string;
}

export interface GpuProbeStatus {
  ran: boolean;
  skipped: string | null;
  exitCode: number | null;
  /** The last 2000 bytes of its output. */
  output: string | null;
  /** The line that says what happened (runtime/status/probe.ts probeLine): the error line when it failed. */
  line?: string | null;
}

export interface NodeStatus {
  node: string;
  protected: boolean;
  /** The node script ran to the end. false: `error` says why (unreachable, script failure). */
  answered: boolean;
  error: string | null;
  /** The recipe status reports on: the one whose container runs, else one whose container exists, else the first. */
  recipe: string | null;
  container: ContainerStatus | null;
  /** Every recipe's container (for nodes with more than one recipe). */
  containers: ContainerStatus[];
  /**
   * docker's own words when the node's Docker daemon does not answer (stopped, its socket missing, permission denied):
   * the containers' state is `unknown` then, never `absent`. null: it answered, or status did not need to ask.
   */
  dockerDown?: string | null;
  env: EnvStatus | null;
  health: HealthStatus;
  kvCache: KvCacheStatus;
  memory: MemoryStatus | null;
  /** nvidia-smi compute processes, information only; null when nvidia-smi did not answer. */
  gpuProcesses: GpuProcess[] | null;
  lastDeploy: LastDeploy | null;
  /** The last verified up (runtime/state/last-good.ts): what `rollback` without --to goes back to. null: none saved. */
  lastKnownGood: LastKnownGood | null;
  /** The scheduled health watch's last record (`pulse model watchdog`; runtime/fleet/watchdog.ts): null while none ran. */
  watchdog: WatchdogRecord | null;
  deploy: DeployInProgress | null;
  /**
   * The node's deploy lock of the primary recipe (any controller's deploy): null when there is none or it could not
   * be read. `live` (held, lease not run out by the node's clock) means an up/down from anywhere is refused now.
   */
  lock: NodeLock | null;
  gpuProbe: GpuProbeStatus | null;
  /** The node's endpoint in the gateway backend file; null when the file is not written yet or does not name the node (a note says why). */
  endpoint: EndpointStatus | null;
  /** nodes.json gatewayTunnel: the `pulse tunnel` health of this node (runtime/gateway/tunnel/health.ts); null without one. */
  tunnel: TunnelStatus | null;
  /** One health word with one meaning (runtime/status/verdict.ts): serving, running, starting, deploying, stopped, failing, failed, down, unreachable. */
  verdict: HealthWord;
  /** false for failing, failed, down and unreachable: status then exits non-zero (7, or 6 when one did not answer). */
  healthy: boolean;
  warnings: string[];
}

export interface StatusReport {
  version: typeof STATUS_JSON_VERSION;
  /** Every node answered (else the exit code is 6). */
  allAnswered: boolean;
  /** Every node is healthy (see NodeStatus.healthy); the exit code is 7 when a node answered but is not. */
  allHealthy: boolean;
  nodes: NodeStatus[];
  /** Command-level notes: why deploys are not shown, which nodes the GPU probe skipped. */
  notes: string[];
}
