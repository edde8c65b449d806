/**
 * The activity interface as the workflows see it (they import it as a type only, so no activity code reaches the
 * workflow bundle). Every input is JSON-safe, secret-free plan data; every output is a step result from
 * runtime/model/step-results.ts (the node steps' results also carry their raw `@pulse` lines: StepRaw).
 */
import type {
  DownPlan,
  DrainResult,
  EnvIdentity,
  FailedStart,
  FleetEntry,
  LockResult,
  MemorySample,
  MkdirResult,
  NodeServes,
  NodeState,
  PlanRecipe,
  NodeTarget,
  PreflightSummary,
  ReadinessEstimate,
  ReadinessProbe,
  RollbackRequest,
  StartResult,
  StopResult,
  UpCheckInput,
  UpInputRef,
  UpPlan,
  UpPlanRef,
  UpStart,
  VerifyResult,
  WatchdogCheck,
  WatchdogOutcome,
  WatchdogRequest,
  WriteEnvResult,
} from '../runtime/model/index.js';

/**
 * The node and the recipe name: the worker takes target and recipe paths from its own nodes.json (activities/authority.ts).
 * Older workflows also send the target and the recipe's paths, which must then be the worker's own (they name, not grant).
 */
export type StepRecipe = Pick<PlanRecipe, 'name'> & Partial<PlanRecipe>;

export interface StopInput {
  node: string;
  target?: NodeTarget;
  recipe: StepRecipe;
  /** The user's --yes: a protected node's stop needs it (absent in older histories: refused there). */
  confirmed?: boolean;
}

/**
 * The drain step's input: the stop's (node, recipe name, the user's --yes: a protected node without it is drained
 * without HTTP) and, from --drain-s, the budget in seconds; without it the worker's nodes.json drainBudgetS applies.
 */
export interface DrainInput extends StopInput {
  budgetS?: number;
}

/** Which node lock a deploy takes (the recipe dir names it) and for what. */
export interface LockInput {
  node: string;
  target?: NodeTarget;
  recipe: StepRecipe;
  action: 'up' | 'down';
  /** false: return no raw records (the deploy was started without --verbose; see DeployOptions). */
  raw?: false;
}

/**
 * The second argument of every node step of a deploy that holds the node lock (the workflows pass it on the
 * patched('pulse-node-lock') path): the step confirms and renews the lock, and fails untouched when it is lost.
 * Deploys started before the lock existed pass none, and their steps run as before.
 */
export interface LockUse {
  nodeLock: true;
  /** false: the step returns no raw records (the deploy was started without --verbose; see DeployOptions). */
  raw?: false;
}

/**
 * What a node step of an up names: an UpInputRef (since HISTORY_PATCH: the plan is the workflow's input), an
 * UpPlanRef (since PLAN_REF_PATCH) or, from older deploys, the whole plan.
 */
export type UpStepPlan = UpPlan | UpPlanRef | UpInputRef;

/**
 * The third argument of pollReadiness when the workflow knows how long readiness usually takes here (the 'starting'
 * state step's answer): shown only (the wait heartbeats it), never a budget. Absent from older workflows.
 */
export interface ReadinessHint {
  readinessEstimate: ReadinessEstimate;
}

export interface StartInput {
  plan: UpStepPlan;
  /** `${workflowId}/${firstExecutionRunId}`: the node keeps an atomic marker so one deploy starts start.sh once. */
  deployId: string;
}

export interface VerifyInput {
  plan: UpStepPlan;
  logPath: string | null;
}

/** What the workflow knows about the node; the activity adds time, workflow and run IDs. */
export interface StateInput extends Omit<NodeState, 'workflowId' | 'runId' | 'at' | 'lastKnownGood'> {
  /** The identity of the .env that was live before this deploy (preflight's); the state writer keeps last known good by it. */
  previousIdentity?: EnvIdentity | null;
  /** Sent by older workflows; ignored: the gateway fragment is rebuilt from the worker's own nodes.json (its fleet). */
  fleet?: FleetEntry[];
  /** State `up` after a start: how long its readiness wait took (s), kept for the next starts' estimate. */
  readinessS?: number;
}

/**
 * A StateInput without the fields that are null (what an up sends since HISTORY_PATCH, for a smaller history):
 * the state writer reads a field left out as null.
 */
export type SparseStateInput = Partial<StateInput> & Pick<StateInput, 'node' | 'state' | 'action'>;

/** What checkPlan found: the plan is the worker's own (else it throws Refused). */
export interface PlanCheck {
  node: string;
  /** The nodes.json the worker checked against (a path on the worker host): older workers only, nobody reads it. */
  nodesFile?: string;
  /** sha256 of the worker's own plan (runtime/plan/plan-check.ts planDigest): the UpPlanRef of every later step names it (absent for an UpInputRef). */
  planDigest?: string;
}

export interface PublishResult {
  /** Gateway warnings (e.g. "no enabled endpoint: first node stays enabled"). */
  warnings: string[];
  changed: boolean;
  /** State `starting`: how long readiness usually takes here (absent from older workers). */
  readiness?: ReadinessEstimate;
  /** What the node now serves and its endpoint, as this step wrote them (absent from older workers). */
  serves?: NodeServes;
}

/** What planRollback made: the plan (an UpPlan with `restore`), and what the dry-run and the UI show beside it. */
export interface RollbackPlan {
  plan: UpPlan;
  /** How many HF_TOKEN/API_KEY lines the backup holds (restored with it; their values never leave the node). */
  secretLines: number;
  /** `KEY: live → restored` for each key that differs from the live .env. */
  keyDifference: string[];
}

export interface PulseActivities {
  /** A rollback's first step: read and check the backup on the node, and make the plan from it. */
  planRollback(request: RollbackRequest): Promise<RollbackPlan>;
  /** Before step 1: the worker rebuilds the plan from its own nodes.json and profiles; any difference is refused. */
  checkPlan(plan: UpPlan | UpCheckInput | UpStart | UpInputRef | DownPlan): Promise<PlanCheck>;
  /** Before anything else on the node: take its deploy lock (refused, naming the holder, while another's is live). */
  acquireNodeLock(input: LockInput): Promise<LockResult>;
  /** At the end (success, failure after compensation, cancel): let the lock go if this deploy still holds it. */
  releaseNodeLock(input: LockInput): Promise<LockResult>;
  /** Step 1: read-only checks on the node; the summary the workflow and the CLI read (PreflightSummary). */
  runPreflight(plan: UpStepPlan, lock?: LockUse): Promise<PreflightSummary>;
  /** Step 2: the pulse-mkdir directories (the result holds only the raw records, for --verbose). */
  makeDirs(plan: UpStepPlan, lock?: LockUse): Promise<MkdirResult>;
  /** Before step 3's stop (and down's): wait until the server has nothing in flight, up to the drain budget. */
  drainServer(input: DrainInput, lock?: LockUse): Promise<DrainResult>;
  /** Step 3 (and down): stop.sh, then make sure the container is gone. */
  stopServer(input: StopInput, lock?: LockUse): Promise<StopResult>;
  /** Step 4: poll MemAvailable every second until the gate, up to plan.memory.timeoutS. */
  waitForMemory(plan: UpStepPlan, lock?: LockUse): Promise<MemorySample>;
  /** Step 5: backup + write the .env; skipped when the identity is the same. */
  writeEnv(plan: UpStepPlan, lock?: LockUse): Promise<WriteEnvResult>;
  /** Step 6: setsid start.sh, at most once per deployId. */
  startServer(input: StartInput, lock?: LockUse): Promise<StartResult>;
  /** Step 7: poll /v1/models every second until 200, up to plan.readiness.timeoutS. */
  pollReadiness(plan: UpStepPlan, lock?: LockUse, hint?: ReadinessHint): Promise<ReadinessProbe>;
  /** Step 8: served name, max_model_len, KV cache line, pulse-proof texts. */
  verifyServer(input: VerifyInput, lock?: LockUse): Promise<VerifyResult>;
  /**
   * Before an up's auto-rollback (its stop removes the container): the failed start's log and the last lines of its
   * container's log (of the start log when the container is gone), read-only, redacted on the node.
   */
  readFailedStart(input: VerifyInput): Promise<FailedStart>;
  /** Step 9 (and 'starting', 'down'): node state + gateway fragment. */
  publishState(input: StateInput | SparseStateInput): Promise<PublishResult>;
  /** Compensation: the node state says failed and the gateway fragment disables its endpoint. */
  markFailed(input: StateInput | SparseStateInput): Promise<PublishResult>;
  /** The watchdog's read-only check of a node (its node queue): what status sees, HTTP only where allowed. */
  watchdogProbe(request: WatchdogRequest): Promise<WatchdogCheck>;
  /** The watchdog's record in the node state (the state queue): verdict, streak, endpoint, whether to heal now. */
  watchdogRecord(input: { request: WatchdogRequest; check: WatchdogCheck | null }): Promise<WatchdogOutcome>;
}
