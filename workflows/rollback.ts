/**
 * rollbackWorkflow: `pulse model rollback`, and the child of an up's automatic rollback. Its input only names the
 * node and the backup; the first step (planRollback) reads and checks the backup on the node and makes the plan, then
 * the up steps run with it (up-steps.ts): preflight of that .env's mounts and files, stop, memory, write (the live
 * .env is backed up first, then the backup's exact bytes take its place), setsid start, readiness, verify against the
 * restored profile, publish. A failure after the stop compensates like an up; a rollback never rolls back in turn.
 */
import { upsertSearchAttributes } from '@temporalio/workflow';
import { ROLLBACK_STEPS } from '../runtime/steps/catalog.js';
import { SA_PROFILE } from './definitions.js';
import { stepActivity } from './options.js';
import { failDeploy, hasPulseAttributes, lockInput, markOutcome, refuseUnconfirmed, releaseLock, takeLock } from './saga.js';
import { StepTracker } from './tracker.js';
import { newResult, newRun, runSteps, stateInput } from './up-steps.js';
import type { DeployResult, RollbackRequest, UpPlan } from '../runtime/model/index.js';

/** Brings request.node back to the exact bytes of request.backup; returns the DeployResult, or fails like an up. */
export async function rollbackWorkflow(request: RollbackRequest): Promise<DeployResult> {
  const t = new StepTracker(request.node, 'up');
  let plan: UpPlan;
  try {
    // The workflow's own refusal needs the node's protected flag, which only the worker's nodes.json has: the
    // planRollback step refuses a protected node without --yes before it reads anything.
    const planned = await t.run(ROLLBACK_STEPS.backup, () => stepActivity(ROLLBACK_STEPS.backup, request.node)(request));
    plan = planned.plan;
    refuseUnconfirmed(plan.node, plan.protected, plan.confirmed, 'rollback');
  } catch (err) {
    const result: DeployResult = { ...newResult({ node: request.node, profile: null, clientNotes: [] } as unknown as UpPlan), state: 'unchanged', restoredFrom: request.backup, undid: request.undid };
    throw await failDeploy(err, t, { armed: false }, result, () => Promise.resolve());
  }
  if (hasPulseAttributes()) upsertSearchAttributes([{ key: SA_PROFILE, value: plan.profile }]);
  const run = newRun(plan, t, request.drainS ?? undefined);
  run.result.restoredFrom = request.backup;
  run.result.undid = request.undid;
  const release = (): Promise<unknown> => run.acts.unlock(lockInput(plan, 'up'));
  try {
    run.lock = [{ nodeLock: true }];
    await takeLock(t, () => run.acts.lock(lockInput(plan, 'up')), () => (run.lock = []));
    await runSteps(run);
  } catch (err) {
    if (!run.saga.armed) run.result.state = run.pre ? (run.pre.container?.running ? 'up' : 'down') : 'unchanged';
    throw await failDeploy(err, t, run.saga, run.result, (error) => run.acts.markFailed(stateInput(run, 'failed', error)), run.lock.length > 0 ? release : undefined);
  }
  if (run.lock.length > 0) await releaseLock(t, run.result, release);
  markOutcome('succeeded');
  run.result.steps = t.resultSteps();
  t.finish(`**rollback** to ${plan.profile} on ${plan.node} (${run.result.mode})`);
  return run.result;
}
