/** Step results: what each activity returns (JSON-safe, secret-free; stored in history). */
import type { NodeLock } from './node-state.js';
import type { EnvIdentity } from './plan.js';
import type { ServerPhase } from './progress.js';

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

/**
 * What the preflight step returns into history (issue 11): only what the workflow and the CLI read of the report
 * (the verdict's failed checks, the same-identity decision and its reason, the .env and container that were live
 * before), so the node's file times, key diff and passed checks stay out of every deploy's history. The whole report
 * is what `up --dry-run --preflight` prints; histories from before this hold the whole report (a superset).
 */
export type PreflightSummary = StepRaw & Pick<PreflightReport, 'ok' | 'currentIdentity' | 'container' | 'sameIdentityRunning' | 'restartReason'> & {
  /** The checks that failed (none when ok): the verdict's names and details. */
  checks: CheckResult[];
};

/**
 * One sample of what the running server has in flight (runtime/scripts/drain.sh): vLLM's own gauges from GET /metrics,
 * or, where that page cannot be read, the open client connections on its port.
 */
export interface DrainSample {
  /** metrics: the gauges were read; connections: the fallback count (detail says why); not-running: no container serves. */
  source: 'metrics' | 'connections' | 'not-running';
  /** vllm:num_requests_running and vllm:num_requests_waiting (summed over their labels); null without the page. */
  running: number | null;
  waiting: number | null;
  /** Open client connections on the server port (the fallback's count), null when the gauges were read. */
  connections: number | null;
  /** --shutdown-timeout N of the live .env's EXTRA_VLLM_ARGS (the server's own drain on SIGTERM), or null. */
  shutdownTimeoutS: number | null;
  detail: string;
}

/**
 * What the drain step did before a stop: how long it waited of its budget, what was in flight at its first and last
 * sample, and how many requests the stop that follows cuts (`cut`: still in flight when the budget ran out; 0 when the
 * server reached 0). `drained`: of the requests in flight when the drain began, how many it let finish (at least).
 */
export interface DrainResult extends StepRaw {
  source: DrainSample['source'];
  budgetS: number;
  waitedS: number;
  /** Whether the server reached nothing in flight (false: the budget ran out, or the drain was skipped). */
  idle: boolean;
  /** The drain was skipped (a budget of 0: nodes.json drainBudgetS 0); nothing was sampled. */
  skipped?: boolean;
  /** In flight at the first sample (running + waiting, or connections with the fallback). */
  atStart: number;
  drained: number;
  cut: number;
  /** The last sample's counts. */
  running: number | null;
  waiting: number | null;
  connections: number | null;
  shutdownTimeoutS: number | null;
  detail: string;
}

export interface StopResult extends StepRaw {
  wasRunning: boolean;
  containerGone: boolean;
  /** docker's state before the stop (running, paused, restarting, exited, ..., absent); absent from old results. */
  before?: string;
  /** The exit code the server stopped with (docker wait) and its meaning in words; null when it did not run. */
  exitCode?: number | null;
  exitMeaning?: string | null;
  /**
   * The requests in flight right before the stop signal (stop.sh reads them just before it runs the recipe's
   * stop.sh): what the stop cut, with vLLM's default --shutdown-timeout 0. null: nothing ran or nothing was read;
   * absent from older results.
   */
  atSignal?: number | null;
  /** Where that count came from: vLLM's gauges, or the open client connections where /metrics could not be read. */
  atSignalSource?: 'metrics' | 'connections' | null;
  atSignalDetail?: string | null;
}

/**
 * What the lock step returns: the lock as this deploy now holds it (since issue 11 only its state and times, what the
 * step's note shows; older histories hold the whole NodeLock).
 */
export interface LockResult extends StepRaw {
  lock: Pick<NodeLock, 'state' | 'since' | 'leaseUntil' | 'cleared'> | null;
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
  /** Old backups removed by pruning (keep the newest keepBackups, never the one last known good points to). */
  prunedBackups?: number;
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
  /** The container as a probe that got no 200 saw it (the wait keeps the first one to notice restarts); absent otherwise. */
  container?: ReadinessSeen | null;
  /** The server's phase from the container log's tail (a probe without a 200 reads one); absent otherwise. */
  phase?: ServerPhase | null;
  /** That tail's last line, cut (shown while no known phase was seen). */
  lastLine?: string | null;
}

/** The container a readiness wait first saw: a later probe fails when it was replaced or restarted since. */
export interface ReadinessSeen {
  containerId: string;
  restartCount: number;
}

export interface VerifyResult extends StepRaw {
  ok: boolean;
  servedModelName: string | null;
  maxModelLen: number | null;
  kvCacheLine: string | null;
  /** Each pulse-proof text and whether the log had it (the verify activity returns only those not found: warnings). */
  proofs: { text: string; found: boolean }[];
  problems: string[];
  warnings: string[];
}

/**
 * An up's failed start as its auto-rollback found it, read before the rollback's stop removed the container (the
 * failure block shows it instead of the restored server's): the start log and the last lines of the container log
 * (of the start log when the container was already gone), redacted on the node.
 */
export interface FailedStart {
  /** The failed start's log (logs/pulse-up-*.log), or null when the up had none. */
  logPath: string | null;
  /** What the lines are from: the container's log, or the start log (the container was gone); null: nothing read. */
  source: 'container' | 'start log' | null;
  /** The container read (its name), or the start log's path. */
  name: string | null;
  /** The last lines, oldest first, redacted on the node. */
  lines: string[];
  /** A vLLM failure pulse knows by its line (runtime/vllm/known-failures.ts), or null. */
  known: { id: string; summary: string; relief: string; line: string } | null;
  /** Why nothing (or only the start log) was read, or null. */
  problem: string | null;
}
