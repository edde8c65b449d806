/**
 * downWorkflow: `pulse model down --node <node>` as a durable workflow: stop.sh (container gone), then node state
 * 'down' and the gateway fragment. A failure once the stop has begun marks the node failed (RUNTIME.md), the same
 * saga as up. Step-sequence changes go behind patched(): see the comment at the top of up.ts.
 */
import { patched, proxyActivities } from '@temporalio/workflow';
import type { LockUse, PulseActivities, StateInput } from '../activities/contract.js';
import { AUTHORITY_PATCH, CHECK_TITLE } from './definitions.js';
import { publish, quickStep, stopStep } from './options.js';
import { failDeploy, lockInput, NODE_LOCK_PATCH, refuseUnconfirmed, releaseLock, takeLock } from './saga.js';
import type { SagaState } from './saga.js';
import { StepTracker } from './tracker.js';
import type { DeployResult, DownPlan } from '../runtime/model/index.js';

function downActivities(plan: DownPlan) {
  const on = ` on ${plan.node}`;
  return {
    check: proxyActivities<PulseActivities>(quickStep(`check plan${on}`)).checkPlan,
    lock: proxyActivities<PulseActivities>(quickStep(`node lock${on}`)).acquireNodeLock,
    unlock: proxyActivities<PulseActivities>(quickStep(`node unlock${on}`)).releaseNodeLock,
    stop: proxyActivities<PulseActivities>(stopStep(`1/2 stop${on}`)).stopServer,
    publish: proxyActivities<PulseActivities>(publish(`2/2 publish state${on}`)).publishState,
    markFailed: proxyActivities<PulseActivities>(publish(`compensation${on}`)).markFailed,
  };
}

/** Stops the server on plan.node; returns the DeployResult, or fails with DeployFailed/DeployCancelled. */
export async function downWorkflow(plan: DownPlan): Promise<DeployResult> {
  const acts = downActivities(plan);
  const t = new StepTracker(plan.node, 'down');
  const saga: SagaState = { armed: false };
  const result = newResult(plan);
  let lock: [] | [LockUse] = [];
  const release = (): Promise<unknown> => acts.unlock(lockInput(plan, 'down'));
  try {
    refuseUnconfirmed(plan.node, plan.protected, plan.confirmed, 'down');
    if (patched(AUTHORITY_PATCH)) await t.run('check', CHECK_TITLE, () => acts.check(plan));
    // The node lock (see saga.ts NODE_LOCK_PATCH): before the stop, so a deploy from another controller cannot interleave.
    if (patched(NODE_LOCK_PATCH)) {
      lock = [{ nodeLock: true }];
      await takeLock(t, () => acts.lock(lockInput(plan, 'down')), () => (lock = []));
    }
    saga.armed = true;
    await t.run('stop', 'step 1/2 stop', () => acts.stop({ node: plan.node, target: plan.target, recipe: plan.recipe, confirmed: plan.confirmed }, ...lock), (s) =>
      s.wasRunning ? 'stopped' : 'was not running',
    );
    const pub = await t.run('publish', 'step 2/2 publish state', () => acts.publish(stateInput(plan, 'down', null)));
    result.warnings.push(...pub.warnings);
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
