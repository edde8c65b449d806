/**
 * downWorkflow: `pulse model down --node <node>` as a durable workflow: stop.sh (container gone), then node state
 * 'down' and the gateway fragment. A failure once the stop has begun marks the node failed (RUNTIME.md), the same
 * saga as up. Step-sequence changes go behind patched(): see the comment at the top of up.ts.
 */
import { patched } from '@temporalio/workflow';
import type { LockUse, StateInput } from '../activities/contract.js';
import { DOWN_STEPS, FRAME_STEPS } from '../runtime/steps/catalog.js';
import { AUTHORITY_PATCH } from './definitions.js';
import { frameActivities, stepActivity } from './options.js';
import { failDeploy, keepsRaw, lockInput, lockUse, NODE_LOCK_PATCH, refuseUnconfirmed, releaseLock, stopInput, takeLock } from './saga.js';
import type { SagaState } from './saga.js';
import { StepTracker } from './tracker.js';
import { drainAfterStop, drainBeforeStop, drainOutcome, drainWarnings, stopGraceOf } from './drain.js';
import type { DeployOptions, DeployResult, DownPlan } from '../runtime/model/index.js';

/** One proxy per step (runtime/steps/catalog.ts). */
function downActivities(plan: DownPlan) {
  const { node } = plan;
  return { ...frameActivities(node), stop: stepActivity(DOWN_STEPS.stop, node), publish: stepActivity(DOWN_STEPS.publish, node) };
}

/** Stops the server on plan.node; returns the DeployResult, or fails with DeployFailed/DeployCancelled. */
export async function downWorkflow(plan: DownPlan, opts?: DeployOptions): Promise<DeployResult> {
  const acts = downActivities(plan);
  const t = new StepTracker(plan.node, 'down');
  const saga: SagaState = { armed: false };
  const result = newResult(plan);
  let lock: [] | [LockUse] = [];
  let keepRaw = true;
  const release = (): Promise<unknown> => acts.unlock(lockInput(plan, 'down', keepRaw));
  try {
    refuseUnconfirmed(plan.node, plan.protected, plan.confirmed, 'down');
    if (patched(AUTHORITY_PATCH)) await t.run(FRAME_STEPS.check, () => acts.check(plan));
    // The node lock (see saga.ts NODE_LOCK_PATCH): before the stop, so a deploy from another controller cannot interleave.
    if (patched(NODE_LOCK_PATCH)) {
      keepRaw = keepsRaw(opts);
      lock = [lockUse(keepRaw)];
      await takeLock(t, () => acts.lock(lockInput(plan, 'down', keepRaw)), () => (lock = []));
    }
    // Before the saga arms: the requests in flight finish first (nothing is stopped yet). stop.sh finds out itself
    // whether a container runs, so the drain asks the node too (a server that is not running: one quick sample).
    const drained = await drainBeforeStop(t, DOWN_STEPS.drain, stopInput(plan), opts?.drainS, lock, true);
    if (drained) {
      result.drain = drainOutcome(drained);
      result.warnings.push(...drainWarnings(drained));
    }
    saga.armed = true;
    const grace = stopGraceOf(drained);
    const stop = grace > 0 ? stepActivity(DOWN_STEPS.stop, plan.node, grace) : acts.stop;
    drainAfterStop(result, drained, await t.run(DOWN_STEPS.stop, () => stop(stopInput(plan), ...lock)));
    const pub = await t.run(DOWN_STEPS.publish, () => acts.publish(stateInput(plan, 'down', null)));
    result.warnings.push(...pub.warnings);
    if (pub.serves) result.serves = pub.serves;
  } catch (err) {
    if (!saga.armed) result.state = 'unchanged'; // refused before the stop: nothing changed on the node
    throw await failDeploy(err, t, saga, result, (error) => acts.markFailed(stateInput(plan, 'failed', error)), lock.length > 0 ? release : undefined);
  }
  if (lock.length > 0) await releaseLock(t, result, release);
  result.ok = true;
  result.state = 'down';
  result.steps = t.resultSteps();
  t.finish(`**down** on ${plan.node}`);
  return result;
}

function stateInput(plan: DownPlan, state: StateInput['state'], error: string | null): StateInput {
  return {
    node: plan.node,
    state,
    action: 'down',
    profile: null,
    identity: null,
    backupPath: null,
    logPath: null,
    kvCacheLine: null,
    maxModelLen: null,
    servedModelName: null,
    overlayManifest: null,
    error,
    previousProfile: null,
  };
}

function newResult(plan: DownPlan): DeployResult {
  return {
    ok: false,
    node: plan.node,
    action: 'down',
    profile: null,
    mode: 'down',
    state: 'down',
    backupPath: null,
    rollbackCommand: null,
    error: null,
    warnings: [],
    clientNotes: [],
    steps: [],
    errorType: null,
    compensated: false,
  };
}
