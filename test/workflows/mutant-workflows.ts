/**
 * A deliberately non-deterministic change, for replay.test.ts only: upWorkflow schedules makeDirs before the
 * preflight (a step-order change without patched()). The saved histories must fail to replay against it.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { PulseActivities } from '../../activities/contract.js';
import type { DeployResult, DownPlan, UpPlan } from '../../runtime/model/index.js';
import { downWorkflow as realDown, upWorkflow as realUp } from '../../workflows/index.js';

const acts = proxyActivities<PulseActivities>({ startToCloseTimeout: '1m' });

/** upWorkflow with an extra step first: a change that is not replay-safe. */
export async function upWorkflow(plan: UpPlan): Promise<DeployResult> {
  await acts.makeDirs(plan);
  return realUp(plan);
}

/** Unchanged downWorkflow. */
export async function downWorkflow(plan: DownPlan): Promise<DeployResult> {
  return realDown(plan);
}
