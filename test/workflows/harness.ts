/** One time-skipping test server per test file, and a helper that runs a workflow on a fresh worker with fakes. */
import { randomUUID } from 'node:crypto';
import { Client, WorkflowFailedError } from '@temporalio/client';
import type { WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import type { PulseActivities } from '../../activities/contract.js';
import { WORKFLOW_BUNDLE_PATH } from '../../worker/main.js';
import { workflowIdFor } from '../../workflows/definitions.js';
import type { DeployResult, DownPlan, UpPlan } from '../../runtime/model/index.js';
import { TEST_SERVER_BIN } from '../helpers/dev-server.js';

let quiet = false;
/** Worker state changes at INFO would drown the test output: keep warnings and errors only. */
export function quietRuntime(): void {
  if (quiet) return;
  quiet = true;
  Runtime.install({ logger: new DefaultLogger('WARN') });
}

export async function timeSkippingEnv(): Promise<TestWorkflowEnvironment> {
  quietRuntime();
  return TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path: TEST_SERVER_BIN } } });
}

export interface Outcome {
  ok: boolean;
  result: DeployResult;
  /** The workflow's failure (ApplicationFailure DeployFailed/DeployCancelled) when it failed. */
  failure: ApplicationFailure | null;
  workflowId: string;
  runId: string;
}

/** Runs upWorkflow/downWorkflow to its end on a worker with `acts`; `during` runs once it started (queries, cancel). */
export async function runWorkflow(
  env: TestWorkflowEnvironment,
  acts: PulseActivities,
  plan: UpPlan | DownPlan,
  during?: (h: WorkflowHandle) => Promise<void>,
  opts: { noAutoSkip?: boolean; heartbeatThrottleMs?: number } = {},
): Promise<Outcome> {
  const taskQueue = `test-${randomUUID()}`;
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: { codePath: WORKFLOW_BUNDLE_PATH },
    activities: acts,
    maxHeartbeatThrottleInterval: opts.heartbeatThrottleMs ?? 100,
  });
  const workflowId = `${workflowIdFor(plan.node)}-${randomUUID().slice(0, 8)}`;
  return worker.runUntil(async () => {
    // env.client skips time whenever the test awaits a result; a plain client leaves skipping to env.sleep alone.
    const client = opts.noAutoSkip ? new Client({ connection: env.connection }) : env.client;
    const h = await client.workflow.start(plan.action === 'up' ? 'upWorkflow' : 'downWorkflow', { args: [plan], taskQueue, workflowId });
    if (during) await during(h);
    try {
      const result = (await h.result()) as DeployResult;
      return { ok: true, result, failure: null, workflowId, runId: h.firstExecutionRunId };
    } catch (err) {
      if (!(err instanceof WorkflowFailedError) || !(err.cause instanceof ApplicationFailure)) throw err;
      const result = err.cause.details?.[0] as DeployResult;
      return { ok: false, result, failure: err.cause, workflowId, runId: h.firstExecutionRunId };
    }
  });
}
