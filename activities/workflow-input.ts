/**
 * The input of the workflow an activity runs for: the first argument of its WORKFLOW_EXECUTION_STARTED event (the
 * CLI's UpStart, or a whole plan), read from the workflow's own history through the worker's client. Since
 * HISTORY_PATCH (workflows/definitions.ts) the plan check and every node step of an up get only an UpInputRef and
 * read their plan here, so the plan is in history once, as the workflow input (issue 11). What is read only names
 * things, as any input: the caller hands it to the authority (activities/authority.ts), which checks it exactly
 * as it checks a plan passed in directly. A run's input never changes, so it is kept per run (a few, newest last).
 */
import { Context } from '@temporalio/activity';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow/index.js';
import { refusePlan } from '../runtime/plan/plan-check.js';

/** Reads the input of the workflow the current activity runs for. */
export type WorkflowInputReader = () => Promise<unknown>;

/** How many runs' inputs a worker keeps (each a plan of ~2 KB; a worker runs a few deploys at a time). */
const KEPT = 32;

/** The reader over the worker's client (Context.current().client), keeping each run's input once read. */
export function historyInputReader(): WorkflowInputReader {
  const kept = new Map<string, unknown>();
  return async () => {
    const ctx = Context.current();
    const { workflowExecution, workflowNamespace } = ctx.info;
    if (!workflowExecution) throw refusePlan('the step names the workflow input, but no workflow runs it');
    const key = `${workflowNamespace}/${workflowExecution.workflowId}/${workflowExecution.runId}`;
    if (kept.has(key)) return kept.get(key);
    const { client } = ctx;
    const page = await client.workflowService.getWorkflowExecutionHistory({
      namespace: workflowNamespace,
      execution: workflowExecution,
      maximumPageSize: 1,
    });
    const started = page.history?.events?.[0]?.workflowExecutionStartedEventAttributes;
    if (!started) throw refusePlan(`the history of ${workflowExecution.workflowId} has no start event to read the plan from`);
    const input = await decodeFromPayloadsAtIndex<unknown>(client.options.loadedDataConverter, 0, started.input?.payloads);
    kept.set(key, input);
    if (kept.size > KEPT) kept.delete(kept.keys().next().value as string);
    return input;
  };
}

/** The reader of every worker in this process (a run ID names one run on one server: one cache serves them all). */
export const workerInputReader: WorkflowInputReader = historyInputReader();
