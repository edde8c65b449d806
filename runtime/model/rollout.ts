/**
 * A rollout (issue 15): one profile up (or down) on several nodes, one node (or --max-parallel N) at a time, each by
 * the node's own deploy workflow as a child of rolloutWorkflow. The request only NAMES things; the worker plans each
 * node from its own nodes.json and profiles (activities/rollout.ts). Type-only, like the rest of runtime/model.
 */

/** The workflow input of a rollout: names and flags, never a plan. */
export interface RolloutRequest {
  action: 'up' | 'down';
  version: 1;
  /** The profile of an up; null for a down. */
  profile: string | null;
  /** The nodes in the order they go (the CLI puts --all's unprotected nodes first). */
  nodes: string[];
  /** --yes: needed once when a protected node is in the set. */
  confirmed: boolean;
  experimental: boolean;
  restart: boolean;
  /** --auto-rollback: a node whose deploy or gate fails is brought back to its previous .env. */
  autoRollback: boolean;
  /** --allow-outage: a step may leave the model with no enabled endpoint. */
  allowOutage: boolean;
  /** --max-parallel N (default 1): how many nodes go at once. */
  maxParallel: number;
  timeoutS: number | null;
  minMemGib: number | null;
  /** --verbose: each child keeps its raw records (DeployOptions). */
  verbose: boolean;
  /** --drain-s (0: --no-drain) for each node's drain before its stop (DeployOptions); absent or null: nodes.json's. */
  drainS?: number | null;
}

/** Where one node of a rollout stands. */
export type RolloutNodeStatus = 'pending' | 'running' | 'succeeded' | 'failed' | 'refused' | 'rolled-back' | 'cancelled' | 'skipped';

export interface RolloutNode {
  node: string;
  protected: boolean;
  status: RolloutNodeStatus;
  /** The child's workflow ID and run (the node's own: workflowIdFor(node)), once it started. */
  workflowId: string | null;
  runId: string | null;
  /** What the gate found (verify by the child, then smoke): null before it ran. */
  gate: string | null;
  error: string | null;
  /** The endpoints the guard found enabled besides the nodes of this step (before the child started). */
  serving: string[] | null;
}

/** The rollout's query answer and its result. */
export interface RolloutProgress {
  action: 'up' | 'down';
  profile: string | null;
  nodes: RolloutNode[];
  /** 'running' until the end; then how it ended. */
  outcome: 'running' | 'succeeded' | 'failed' | 'refused' | 'cancelled' | 'stopped';
  /** Set by the stop signal (`pulse model cancel` without --now): no node starts after the current one. */
  stopRequested: boolean;
  error: string | null;
}

/** What the guard saw in the gateway backend file for one step. */
export interface GuardVerdict {
  /** Enabled endpoints other than the step's nodes (the fallback's forced one does not count). */
  serving: string[];
  /** The reason the step is refused, or null. */
  refused: string | null;
}
