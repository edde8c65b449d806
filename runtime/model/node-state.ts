/** What pulse records about a node: its last deploy (nodes/<node>.json) and its deploy lock. */
import type { EnvIdentity } from './plan.js';
import type { ReadinessSample } from './progress.js';

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
  /** The last verified up on the node (absent in state files written before it existed). */
  lastKnownGood?: LastKnownGood | null;
  /** Readiness durations of the node's recent successful starts (runtime/vllm/readiness-eta.ts; absent in older files). */
  readinessHistory?: ReadinessSample[];
  /** The scheduled health watch's record (`pulse model watchdog`; runtime/fleet/watchdog.ts); absent while none ran. */
  watchdog?: WatchdogRecord | null;
  /** What happened to the .env files recent deploys ran here (runtime/state/env-runs.ts; absent in older files). */
  envRuns?: EnvRunRecord[];
  /** The backups recent deploys wrote and the .env identity each holds (runtime/state/env-runs.ts). */
  backupsOf?: { path: string; sha256: string; profile: string }[];
}

/** One .env's latest outcome on a node, by its identity (runtime/state/env-runs.ts EnvRun). */
export interface EnvRunRecord {
  sha256: string;
  profile: string;
  outcome: 'served' | 'failed';
  at: string;
  step: string | null;
  undoneAt?: string;
  undoneBy?: string;
}

/** One watchdog check's word: ok, down, or skipped (a deploy holds the node, nothing deployed to watch). */
export type WatchdogVerdict = 'ok' | 'down' | 'skipped';

/** What the watchdog keeps in nodes/<node>.json between its scheduled runs (the worker writes it). */
export interface WatchdogRecord {
  /** The last check (ISO) and its verdict; `reason` says why it is down or skipped. */
  at: string;
  verdict: WatchdogVerdict;
  reason: string | null;
  /** The verdict that counts (ok or down): skipped checks leave it, its start and its streak alone. */
  judged: 'ok' | 'down' | null;
  /** When `judged` began (ISO), and how many checks in a row have said it. */
  since: string | null;
  streak: number;
  /** Checks since the last heal (a heal needs N failed checks after it too). */
  sinceHeal: number;
  /** The watchdog disabled the gateway endpoint (after N failed checks in a row) until N good ones; the file says why. */
  disabled: string | null;
  /** The times (ISO) of the heals of the last hour, oldest first, and how many heals in all. */
  heals: string[];
  healsTotal: number;
  /** Healing stopped: the heal budget is spent (why, one line); cleared when the node checks ok again. */
  gaveUp: string | null;
  /** The last check's notes that do not make the node down (.env drift, memory, restart count). */
  notes: string[];
  /** Docker's RestartCount at the last check (a growth is a note). */
  restartCount: number | null;
}

/**
 * The last up that verified on the node (runtime/state/last-good.ts keeps it). Its .env is the live one until a later up
 * replaces it; that up's backup then holds its exact bytes (`backupPath`), and backup pruning never removes that file.
 */
export interface LastKnownGood {
  profile: string;
  identity: EnvIdentity;
  /** When it verified (ISO). */
  at: string;
  workflowId: string | null;
  /** The backup that holds its .env's bytes since a later up replaced the file; null while it is the live .env. */
  backupPath: string | null;
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
  /**
   * A held lease further ahead than one lease plus slack (runtime/scripts/lock.sh): what was found (holder, until).
   * Such a lock is not live: the next deploy clears it. Absent when the lease is sane.
   */
  corrupt?: string;
  /** An acquire that took over a corrupt lock: what it found and how it cleared it. */
  cleared?: string;
}
