/**
 * The deploy the browser test looks at. It runs the real upWorkflow on a real dev server, started the way the
 * CLI starts it (workflow ID, search attributes, static summary) and served by a worker from worker/main.ts, and
 * returns the UI link that the CLI's own `uiLink()` prints for it.
 *
 * NOTE: the activities here are the scripted fakes of test/e2e/fake-activities.ts, because the simulator had no
 * `startSim()` and `pulse model up` no end-to-end path yet when this was written. The browser checks only what the
 * UI shows of the workflow (its ID, summary, search attributes and the activity of each step), which is the same
 * for the fake and the real activities; the simulator and CLI tiers cover what the activities do on a node.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { uiLink } from '../../cli/temporal.js';
import { loadNodesConfig } from '../../runtime/config/nodes.js';
import { loadProfiles } from '../../runtime/config/profiles.js';
import { buildUpPlan } from '../../runtime/plan.js';
import { createPulseWorker } from '../../worker/main.js';
import { SA_ACTION, SA_NODE, SA_PROFILE, TASK_QUEUE, UP_WORKFLOW, workflowIdFor } from '../../workflows/definitions.js';
import type { DeployResult } from '../../workflows/types.js';
import { fakeActivities } from '../e2e/fake-activities.js';
import type { DevServer } from '../helpers/dev-server.js';

export interface UiDeploy {
  node: string;
  profile: string;
  workflowId: string;
  runId: string;
  summary: string;
  result: DeployResult;
  /** The link the CLI prints for this run. */
  link: string;
}

/** Runs `up <profile>` on a node of runtime/nodes.example.json to completion and returns its UI link. */
export async function runDeploy(server: DevServer, stateDir: string, node: string, profile: string): Promise<UiDeploy> {
  if (!server.uiUrl) throw new Error('the dev server runs without its UI');
  const config = loadNodesConfig(path.join(repoRoot(), 'runtime/nodes.example.json'));
  const opts = { profile, node, overlay: null, overlayWins: false, yes: true, restart: false, timeoutS: undefined, minMemGib: undefined };
  const plan = { ...buildUpPlan(config, loadProfiles(), opts, new Date()), rollbackHint: null };
  const summary = `up ${profile} on ${node}`; // what cli/commands/up.ts passes as the static summary
  const native = await NativeConnection.connect({ address: server.address });
  const connection = await Connection.connect({ address: server.address });
  try {
    const worker = await createPulseWorker({ connection: native, namespace: server.namespace, stateDir, activities: fakeActivities });
    const client = new Client({ connection, namespace: server.namespace });
    const workflowId = workflowIdFor(node);
    const handle = await client.workflow.start(UP_WORKFLOW, {
      taskQueue: TASK_QUEUE,
      workflowId,
      args: [plan],
      typedSearchAttributes: [{ key: SA_NODE, value: node }, { key: SA_ACTION, value: 'up' }, { key: SA_PROFILE, value: profile }],
      staticSummary: summary,
    });
    const result = (await worker.runUntil(handle.result())) as DeployResult;
    const runId = handle.firstExecutionRunId;
    const link = uiLink({ uiBase: server.uiUrl, namespace: server.namespace, address: server.address, tls: undefined, apiKey: undefined, embedded: null }, workflowId, runId);
    if (!link) throw new Error('uiLink returned no link although the UI base is known');
    return { node, profile, workflowId, runId, summary, result, link };
  } finally {
    await connection.close();
    await native.close();
  }
}

/** The repo root, from dist/test/browser/deploy.js. */
function repoRoot(): string {
  return path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
}
