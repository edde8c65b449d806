/**
 * Names shared by the workflows, the worker and the CLI client. Deterministic and dependency-free apart from
 * @temporalio/workflow's search-attribute helpers (safe in the workflow bundle).
 */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** The one task queue every pulse worker polls. */
export const TASK_QUEUE = 'pulse-deploy';

/** The workflow ID is the per-node lock: one up or down per node at a time, visible in the UI. */
export function workflowIdFor(node: string): string {
  return `pulse-model-${node}`;
}

/** Custom search attributes, registered idempotently by the CLI/worker at start (Keyword: exact match filters). */
export const SA_NODE = defineSearchAttributeKey('PulseNode', SearchAttributeType.KEYWORD);
export const SA_PROFILE = defineSearchAttributeKey('PulseProfile', SearchAttributeType.KEYWORD);
export const SA_ACTION = defineSearchAttributeKey('PulseAction', SearchAttributeType.KEYWORD);
export const SEARCH_ATTRIBUTES = [SA_NODE, SA_PROFILE, SA_ACTION] as const;

/** Workflow type names as the CLI starts them (must match the exported function names). */
export const UP_WORKFLOW = 'upWorkflow';
export const DOWN_WORKFLOW = 'downWorkflow';

/** Name of the query every pulse workflow answers with a DeployProgress (workflows/progress.ts defines it). */
export const PROGRESS_QUERY = 'progress';
