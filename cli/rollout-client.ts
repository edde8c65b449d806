/**
 * What watch and cancel ask about rollouts (issue 15): the running rollout a node belongs to (its workflow ID names
 * its node set: runtime/fleet/rollout.ts rolloutIdFor), the stop signal (after the current node) and the cancel (at once:
 * the running child is cancelled too and compensates).
 */
import type { DeployRef } from './deploy-client/index.js';
import type { PulseTemporal } from './deploy-client/temporal.js';

/** The running rollout whose node set holds `node`, or null. */
export async function runningRolloutWith(t: PulseTemporal, node: string): Promise<DeployRef | null> {
  const { ROLLOUT_WORKFLOW } = await import('../workflows/definitions.js');
  for await (const info of t.client.workflow.list({ query: `WorkflowType = '${ROLLOUT_WORKFLOW}' AND ExecutionStatus = 'Running'`, pageSize: 50 })) {
    const nodes = info.workflowId.replace(/^pulse-rollout-/, '').split('+');
    if (nodes.includes(node)) return { workflowId: info.workflowId, runId: info.runId, what: `rollout of ${nodes.join(', ')}` };
  }
  return null;
}

/** Asks the rollout to start no node after the current one. */
export async function stopRollout(t: PulseTemporal, ref: DeployRef): Promise<void> {
  await t.client.workflow.getHandle(ref.workflowId, ref.runId).signal('stopRollout');
}

/** Cancels the rollout: its running child is cancelled with it and compensates. */
export async function cancelRollout(t: PulseTemporal, ref: DeployRef): Promise<void> {
  await t.client.workflow.getHandle(ref.workflowId, ref.runId).cancel();
}
