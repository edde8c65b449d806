/**
 * Names shared by the workflows, the worker and the CLI client. Deterministic and dependency-free apart from
 * @temporalio/workflow's search-attribute helpers (safe in the workflow bundle).
 */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** The task queue of the deploy workflows and their node steps: every pulse worker polls it. */
export const TASK_QUEUE = 'pulse-deploy';

/**
 * The task queue of the state activities (node state files, the gateway file): polled only by the worker on the
 * gateway host, so every state write lands in that host's $PULSE_STATE_DIR however many controller hosts run workers.
 */
export const GATEWAY_TASK_QUEUE = 'pulse-gateway';

/**
 * Where a workflow running on `workflowQueue` sends its state writes: GATEWAY_TASK_QUEUE for the production queue;
 * a workflow on any other queue (tests, a private `pulse worker --task-queue`) keeps them on its own queue, where
 * the one worker that serves it also holds the state dir.
 */
export function stateTaskQueue(workflowQueue: string): string {
  return workflowQueue === TASK_QUEUE ? GATEWAY_TASK_QUEUE : workflowQueue;
}

/** The workflow ID is the per-node lock: one up or down per node at a time, visible in the UI. */
export function workflowIdFor(node: string): string {
  return `pulse-model-${node}`;
}

/** Custom search attributes, registered idempotently by the CLI/worker at start (Keyword: exact match filters). */
export const SA_NODE = defineSearchAttributeKey('PulseNode', SearchAttributeType.KEYWORD);
export const SA_PROFILE = defineSearchAttributeKey('PulseProfile', SearchAttributeType.KEYWORD);
export const SA_ACTION = defineSearchAttributeKey('PulseAction', SearchAttributeType.KEYWORD);
/** How a deploy ended (upserted by the workflow at its end; absent in deploys from before it existed). */
export const SA_OUTCOME = defineSearchAttributeKey('PulseOutcome', SearchAttributeType.KEYWORD);
export const SEARCH_ATTRIBUTES = [SA_NODE, SA_PROFILE, SA_ACTION, SA_OUTCOME] as const;

/** The values of PulseOutcome: `rolled-back` is an up that failed (or was cancelled) and whose auto-rollback served again. */
export const OUTCOMES = ['succeeded', 'failed', 'rolled-back', 'cancelled'] as const;
export type Outcome = (typeof OUTCOMES)[number];

/** Workflow type names as the CLI starts them (must match the exported function names). */
export const UP_WORKFLOW = 'upWorkflow';
export const DOWN_WORKFLOW = 'downWorkflow';
export const ROLLBACK_WORKFLOW = 'rollbackWorkflow';
export const ROLLOUT_WORKFLOW = 'rolloutWorkflow';
export const WATCHDOG_WORKFLOW = 'watchdogWorkflow';

/** The workflow ID of an up's automatic rollback (a child: the up still holds `workflowIdFor(node)`). */
export function rollbackChildId(parentWorkflowId: string): string {
  return `${parentWorkflowId}-rollback`;
}

/** patched() id of PulseOutcome, upserted at a deploy's end (histories from before it replay without it). */
export const OUTCOME_PATCH = 'pulse-outcome';
/**
 * patched() id of the heal that always restarts (issue 27): the watchdog's heal asks its rollback for a restart, so a
 * heal whose last known good is the live .env stops and starts the server instead of finding the same identity
 * running and doing nothing. A watchdog run from before it replays with the request it sent.
 */
export const HEAL_RESTART_PATCH = 'pulse-heal-restart';
/** patched() id of up's automatic rollback (only plans with autoRollback reach it). */
export const AUTO_ROLLBACK_PATCH = 'pulse-auto-rollback';

/**
 * patched() id of stopping the half-started server of a cancelled up (issue 30 item 6): a cancel after the start
 * step began stops the container before the compensation marks the node failed, so it never goes on to serve the
 * abandoned profile behind a disabled endpoint. Only cancelled ups whose start began ask it.
 */
export const CANCEL_HALT_PATCH = 'pulse-cancel-halt';
/**
 * patched() id of the up's own record after its auto-rollback failed (issue 30 item 3): the rollback's compensation
 * wrote the node state with the restored profile, so status named a deploy the operator never ran; the up writes
 * its own failed record again. Only ups whose auto-rollback failed ask it.
 */
export const ROLLBACK_RECORD_PATCH = 'pulse-rollback-record';

/**
 * patched() id of reading the failed start before an auto-rollback (its stop removes the failed container and its
 * log): the up keeps the start log's path and the container log's last lines in its result, so the failure block
 * shows the failed start, not the restored server. Only ups whose auto-rollback runs after their start ask it.
 */
export const FAILED_START_PATCH = 'pulse-failed-start';

/** Name of the query every pulse workflow answers with a DeployProgress (workflows/progress.ts defines it). */
export const PROGRESS_QUERY = 'progress';

/**
 * patched() id of the plan check (checkPlan before the first step: the worker rebuilds the plan from its own
 * nodes.json and profiles). Histories from before it replay without the check.
 */
export const AUTHORITY_PATCH = 'pulse-worker-authority';

/**
 * patched() id of the small history (issues 11 and 17): the plan check and every node step of an up get only an
 * UpInputRef (the worker reads the plan from the workflow input, activities/workflow-input.ts), the state writes
 * leave out the fields that are null, and this one marker stands for every patch before it (AUTHORITY_PATCH,
 * PLAN_REF_PATCH, NODE_LOCK_PATCH, RAW_VERBOSE_PATCH, OUTCOME_PATCH): an up that took it asks none of them, so its
 * history has one patch marker and one TemporalChangeVersion upsert instead of five of each. An up started before
 * it has no such marker, gets false here on replay, and asks the earlier patches as it did.
 */
export const HISTORY_PATCH = 'pulse-small-history';

/**
 * patched() id of the drain before a stop (issue 29): an up, a rollback or a down whose server runs waits for its
 * requests in flight (the drain step, workflows/drain.ts) before the stop. Asked on its own, after HISTORY_PATCH
 * (which does not stand for it); deploys from before it stop at once, as they did.
 */
export const DRAIN_PATCH = 'pulse-drain';
