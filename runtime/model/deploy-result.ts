/**
 * What the node serves after a deploy's publish step, and whether the gateway sends it traffic: from the node state
 * and the gateway backend file that step just wrote (activities/publish.ts), so the closing block needs no node
 * round trip (issue 30 item 12).
 */
export interface NodeServes {
  state: NodeStateKind;
  profile: string | null;
  servedModelName: string | null;
  maxModelLen: number | null;
  /** The node's endpoint in the gateway backend file (null: the file does not name the node). */
  endpoint: { url: string; enabled: boolean; reason: string | null } | null;
  /**
   * Where the server listens, from the node's BIND and PORT (absent: an older worker). A loopback BIND answers only
   * on the node itself, whatever host the gateway URL names.
   */
  listen?: { bind: string; port: string; loopback: boolean };
}

/** What an up or down returns (and, on failure, carries in its ApplicationFailure's details[0]). */
import type { NodeStateKind } from './node-state.js';
import type { FailedStart } from './step-results.js';

/** How the automatic rollback of a failed up went (absent: none was tried). */
export interface RollbackOutcome {
  ok: boolean;
  /** The profile the node serves again (ok), or the backup's profile it tried. */
  profile: string | null;
  backup: string | null;
  /** The rollback's workflow ID (a child of the up). */
  workflowId: string | null;
  /** Seconds from the failed up's stop to serving again (ok). */
  servingAfterS: number | null;
  error: string | null;
}

export interface DeployResult {
  ok: boolean;
  node: string;
  /** A rollback is an up of a backup's .env: 'up', with restoredFrom set. */
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
  /** An up's automatic rollback (up --auto-rollback, nodes.json autoRollback). */
  rollback?: RollbackOutcome;
  /** An up whose auto-rollback ran after its start: that start's log and last lines, read before the rollback removed its container. */
  failedStart?: FailedStart;
  /** A cancelled up whose start had begun: its server was stopped before the compensation (absent: no such stop). */
  halted?: true;
  /** A rollback: the backup it brought back. */
  restoredFrom?: string;
  /** A rollback: the deploy it undid (workflowId/runId), when an auto-rollback started it. */
  undid?: string | null;
  /** What the node serves after the publish step, and its endpoint (absent: no publish ran, or an older worker). */
  serves?: NodeServes;
  /** The drain before the stop (absent: no drain ran, e.g. nothing served, --no-drain, or a deploy before drains). */
  drain?: DrainOutcome;
}

/** What the drain before the stop found and did (runtime/model/step-results.ts DrainResult, without its raw lines). */
export interface DrainOutcome {
  source: 'metrics' | 'connections' | 'not-running';
  budgetS: number;
  waitedS: number;
  idle: boolean;
  atStart: number;
  drained: number;
  /**
   * How many requests the stop cut: those in flight right before its signal (`atSignal`), or, where the stop read
   * nothing (an older worker), the drain's last sample. With vLLM's --shutdown-timeout N > 0 an upper bound.
   */
  cut: number;
  /** The requests in flight right before the stop signal (StopResult.atSignal); null or absent: not read. */
  atSignal?: number | null;
  detail: string;
}
