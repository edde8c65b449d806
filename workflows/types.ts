/**
 * Plain, JSON-safe types shared by the workflow, the activities, the CLI and the plan builder.
 * Nothing here may hold a secret: the plan is the workflow input and is stored in history forever.
 * No imports: workflow code pulls this file into the workflow bundle.
 */

export interface PlanTarget {
  name: string;
  host: 'local' | 'ssh';
  ssh?: string | undefined;
}

export interface PlanRecipe {
  /** Recipe name in nodes.json, e.g. qwen38-flash. */
  name: string;
  dir: string;
  /** start.sh path (absolute, or relative to dir). */
  start: string;
  stop: string;
  /** The recipe's container name (TP1_CONTAINER_NAME of the recipe). */
  container: string;
}

/** One `-v SRC:DST[:mode]` of the rendered EXTRA_DOCKER_ARGS (after overlay merge). */
export interface PlanMount {
  src: string;
  dst: string;
  mode: 'ro' | 'rw' | null;
  from: 'profile' | 'overlay' | 'node';
}

export interface EnvIdentity {
  /** sha256 hex of the assignment lines, as in the `# pulse-sha256:` header. */
  sha256: string;
  profile: string;
  /** The `# pulse-overlay:` value: `none` or `DIR overlay-sha256=<hex>`. */
  overlay: string;
}

/** The reviewable input of upWorkflow: exactly what `up --dry-run` prints. */
export interface UpPlan {
  action: 'up';
  version: 1;
  node: string;
  target: PlanTarget;
  profile: string;
  protected: boolean;
  /** --yes was given. The workflow itself refuses a protected node without it. */
  confirmed: boolean;
  /** --experimental was given (the worker refuses an experimental profile without it, as the CLI does). */
  experimental: boolean;
  recipe: PlanRecipe;
  env: {
    /** Full text of the rendered .env (header + assignments), no secrets (profiles cannot set them). */
    text: string;
    identity: EnvIdentity;
    /** Absolute path of the recipe .env on the node. */
    path: string;
    /** The rendered key map (assignment values), for the preflight diff and the checks. */
    values: Record<string, string>;
  };
  /** UTC stamp used for file names on the node (backup, log), e.g. 20260923T101500Z. */
  stamp: string;
  /** ISO time of the render (pulse-rendered). */
  renderedAt: string;
  mkdirs: string[];
  mounts: PlanMount[];
  /** Human lines: each overlay mount that replaced a profile mount (--overlay-wins). */
  replacements: string[];
  /** The overlay as read by the CLI: `args` and `manifestText` are its two files' exact texts, so the worker can check
   * the pairs and the overlay-sha256 itself (older plans lack them, and the worker refuses those). */
  overlay: { dir: string; sha256: string; manifest: unknown; args: string; manifestText: string } | null;
  proofs: string[];
  clientNotes: string[];
  expect: {
    servedModelName: string;
    maxModelLen: number | null;
    port: number;
    bind: string;
  };
  /** memory gate in GiB (--min-mem-gib, node, or top-level) and its wait (memTimeoutS). */
  memory: { gateGiB: number; timeoutS: number };
  /** Readiness wait: --timeout-s, default READY_TIMEOUT_S + readyGraceS. */
  readiness: { timeoutS: number };
  restart: boolean;
  /** Everything the gateway fragment needs about the fleet, so the publish step needs no nodes.json. */
  fleet: FleetEntry[];
  /** The command that goes back to the previous profile, computed at plan time from the node state. */
  rollbackHint: string | null;
}

export interface DownPlan {
  action: 'down';
  version: 1;
  node: string;
  target: PlanTarget;
  protected: boolean;
  confirmed: boolean;
  recipe: PlanRecipe;
  stamp: string;
  fleet: FleetEntry[];
}

export type Plan = UpPlan | DownPlan;

export interface FleetEntry {
  node: string;
  gatewayUrl: string;
  /** Whether the gateway host can reach this node's server (a loopback BIND on another host cannot). */
  reachable: boolean;
}

export type NodeStateKind = 'up' | 'down' | 'failed' | 'starting';

/** nodes/<node>.json in $PULSE_STATE_DIR: the last up or down on the node. */
export interface NodeState {
  node: string;
  state: NodeStateKind;
  action: 'up' | 'down';
  profile: string | null;
  identity: EnvIdentity | null;
  workflowId: string | null;
  runId: string | null;
  at: string;
  /** Backup of the previous .env written by this up, if any. */
  backupPath: string | null;
  logPath: string | null;
  /** Saved by verify, shown by status when Docker rotated the line away. */
  kvCacheLine: string | null;
  maxModelLen: number | null;
  servedModelName: string | null;
  overlayManifest: unknown;
  /** Why the node is failed, one line. */
  error: string | null;
  /** The profile that ran before this up (for the rollback command). */
  previousProfile: string | null;
}

/* ---- step results: what each activity returns (JSON-safe) ---- */

/**
 * The raw `@pulse` lines of a step's script run(s), so `up/down/watch --verbose` can show them from history (and
 * the Temporal UI shows them in the activity result). The polling steps (memory, readiness) keep the last probe
 * only; activities/raw.ts caps the rest (last lines kept). Absent when no script ran, and in older histories.
 * Secret-free: the node scripts never print a secret in a record.
 */
export interface StepRaw {
  raw?: string[];
}

/** Step 2 returns nothing but its records. */
export type MkdirResult = StepRaw;

export interface CheckResult {
  name: string;
  ok: boolean;
  detail: string;
}

export interface EnvDiff {
  added: string[];
  removed: string[];
  changed: string[];
}

export interface ContainerInfo {
  name: string;
  running: boolean;
  status: string;
  image: string;
  /** ISO time from docker inspect .State.StartedAt */
  startedAt: string | null;
}

export interface PreflightReport extends StepRaw {
  ok: boolean;
  checks: CheckResult[];
  /** Key map of the current node .env (read in an empty environment) against the render. */
  diff: EnvDiff;
  /** Identity parsed from the current .env header, null when absent or not rendered by pulse. */
  currentIdentity: EnvIdentity | null;
  /** The current body still matches its pulse-sha256 header. */
  currentBodyMatches: boolean;
  /** Epoch seconds of the .env's last change (ctime), null when the file is missing. */
  envCtime: number | null;
  container: ContainerInfo | null;
  /** ctime (epoch s) of each bind-mounted file (and start.sh's CHAT_TEMPLATE, MTP_DRAFT_VOCAB). A mounted directory is
   * left out: it changes live (vLLM writes its caches), and a running container sees those changes anyway. */
  mountCtimes: { path: string; ctime: number }[];
  openConnections: number;
  otherVllmContainers: string[];
  /** The same identity already runs and the container started after every relevant change: skip to 7. */
  sameIdentityRunning: boolean;
  /** Why a same-identity node still needs a restart (human line), or null. */
  restartReason: string | null;
}

export interface StopResult extends StepRaw {
  wasRunning: boolean;
  containerGone: boolean;
}

/**
 * The node's deploy lock of one recipe dir as lock.sh reports it (runtime/steps/lock.ts). `live`: held and its lease
 * has not run out by the NODE's clock; times are ISO strings of the node's clock.
 */
export interface NodeLock {
  state: 'held' | 'released';
  live: boolean;
  /** workflowId/runId of the deploy that holds (or last held) it. */
  deployId: string;
  /** The controller host whose worker took it. */
  host: string;
  action: string;
  since: string | null;
  leaseUntil: string | null;
  /** Where the lock lives on the node. */
  file: string;
}

/** What the lock step returns: the lock as this deploy now holds it. */
export interface LockResult extends StepRaw {
  lock: NodeLock | null;
}

export interface MemorySample extends StepRaw {
  memAvailableGiB: number;
  gateGiB: number;
  watermarkScaleFactor: number | null;
}

export interface WriteEnvResult extends StepRaw {
  written: boolean;
  backupPath: string | null;
  /** Count of carried secret lines (HF_TOKEN=/API_KEY=), never their values. */
  carriedSecretLines: number;
}

export interface StartResult extends StepRaw {
  /** False when this deploy had already started the server (retry or crash-resume). */
  started: boolean;
  logPath: string;
}

export interface ReadinessProbe extends StepRaw {
  ready: boolean;
  httpStatus: number | null;
  detail: string;
}

export interface VerifyResult extends StepRaw {
  ok: boolean;
  servedModelName: string | null;
  maxModelLen: number | null;
  kvCacheLine: string | null;
  proofs: { text: string; found: boolean }[];
  problems: string[];
  warnings: string[];
}

/** Progress that a polling activity heartbeats, and the CLI shows. */
export interface WaitProgress {
  step: 'memory' | 'readiness';
  attempt: number;
  lastAnswer: string;
  elapsedS: number;
  timeoutS: number;
}

export interface DeployResult {
  ok: boolean;
  node: string;
  action: 'up' | 'down';
  profile: string | null;
  /** 'full', 'same-identity' (steps 1,7,8,9), 'down'. */
  mode: 'full' | 'same-identity' | 'down';
  /** The node after the deploy; 'unchanged': it ended before its stop step and before preflight saw the container,
   * so pulse changed nothing there and does not know whether it serves (the CLI then looks: cli/live-state.ts). */
  state: NodeStateKind | 'unchanged';
  backupPath: string | null;
  rollbackCommand: string | null;
  error: string | null;
  warnings: string[];
  clientNotes: string[];
  steps: { step: string; ok: boolean; ms: number; note?: string }[];
  /** The ApplicationFailure type of the first error (Refused, Timeout, VerifyFailed, Cancelled...), null on success. */
  errorType?: string | null;
  /** Whether the compensation (node marked failed, endpoint disabled) ran. */
  compensated?: boolean;
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
