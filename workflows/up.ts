/**
 * upWorkflow: the nine steps of `pulse model up` as a durable saga (RUNTIME.md "What up does"); the steps themselves
 * are in up-steps.ts (a rollback runs them too). With autoRollback (up --auto-rollback, nodes.json autoRollback), a
 * failure or cancel after the stop began is compensated as always and then undone: a rollbackWorkflow child brings
 * the .env that was live before back up (auto-rollback.ts).
 *
 * Changing this file after release: Temporal replays old histories against new code, so a change to the step
 * sequence (a new activity, a removed one, a different order) must be gated: `if (patched('pulse-<change>')) {
 * new path } else { old path }`. Deploys already running keep the old path on replay; new ones take the new path.
 * When no history older than the patch can still be running, switch to `deprecatePatch('pulse-<change>')` and later
 * drop the old path. test/histories/*.json (replayed by test/workflows/replay.test.ts) fail on an ungated change.
 */
import { CancellationScope, isCancellation, patched } from '@temporalio/workflow';
import { FRAME_STEPS } from '../runtime/steps/catalog.js';
import { autoRollback } from './auto-rollback.js';
import { AUTHORITY_PATCH, CANCEL_HALT_PATCH, HISTORY_PATCH } from './definitions.js';
import { checkInputOf, inputRef, PLAN_REF_PATCH, upPlanRef, type UpInput } from './plan-ref.js';
import { describeError, rollbackCommand } from './result.js';
import { failDeploy, keepsRaw, lockInput, lockUse, markOutcome, NODE_LOCK_PATCH, refuseUnconfirmed, releaseLock, stopInput, takeLock } from './saga.js';
import { StepTracker } from './tracker.js';
import { newRun, previousProfile, runSteps, stateInput, type UpRun } from './up-steps.js';
import type { DeployOptions, DeployResult, UpInputRef } from '../runtime/model/index.js';

/**
 * Brings plan.profile up on plan.node; returns the DeployResult, or fails with DeployFailed/DeployCancelled. `plan` is
 * the CLI's UpStart (the plan without its rendered .env) or, from older deploys and hand-made starts, the whole plan.
 */
export async function upWorkflow(plan: UpInput, opts?: DeployOptions): Promise<DeployResult> {
  const run = newRun(plan, new StepTracker(plan.node, 'up'), opts?.drainS);
  // Asked once, first: it stands for every patch below (definitions.ts HISTORY_PATCH), which such an up never asks.
  const small = patched(HISTORY_PATCH);
  run.saga.small = small;
  let keepRaw = true;
  const release = (): Promise<unknown> => run.acts.unlock(lockInput(plan, 'up', keepRaw));
  try {
    refuseUnconfirmed(plan.node, plan.protected, plan.confirmed, 'up');
    // The worker is the authority: it rebuilds the plan from its own nodes.json and profiles before anything runs.
    if (small) {
      // The check and every node step name the node only: the worker reads the plan from this workflow's input.
      run.step = inputRef(plan);
      await run.t.run(FRAME_STEPS.check, () => run.acts.check(run.step as UpInputRef));
    } else if (patched(AUTHORITY_PATCH)) {
      // Since PLAN_REF_PATCH the check gets the plan without the .env's key map and every later node step only the names and
      // the digest it returns (plan-ref.ts): the plan is in history once, as the workflow input.
      const narrow = patched(PLAN_REF_PATCH);
      const checked = await run.t.run(FRAME_STEPS.check, () => run.acts.check(checkInputOf(plan, narrow)));
      if (narrow && checked.planDigest) run.step = upPlanRef(plan, checked.planDigest);
    }
    // Then the node lock, before preflight (see NODE_LOCK_PATCH): a forged plan never even takes a lock.
    if (small || patched(NODE_LOCK_PATCH)) {
      keepRaw = keepsRaw(opts, small);
      run.lock = [lockUse(keepRaw)];
      await takeLock(run.t, () => run.acts.lock(lockInput(plan, 'up', keepRaw)), () => (run.lock = []));
    }
    await runSteps(run);
  } catch (err) {
    const r = run.result;
    if (run.saga.armed) r.rollbackCommand = rollbackCommand(plan.node, previousProfile(run), plan.rollbackHint, plan.protected);
    // Before the stop nothing changed on the node: its state is what preflight saw, or unknown (never "down").
    if (!run.saga.armed) r.state = run.pre ? (run.pre.container?.running ? 'up' : 'down') : 'unchanged';
    // A rollback needs the node lock, which this deploy lets go first: the workflow ID still keeps other deploys out.
    const undo = run.saga.armed && plan.autoRollback === true ? () => autoRollback(run) : undefined;
    if (isCancellation(err) && run.t.began('start') && patched(CANCEL_HALT_PATCH)) await haltHalfStarted(run);
    throw await failDeploy(err, run.t, run.saga, r, (error) => run.acts.markFailed(stateInput(run, 'failed', error)), run.lock.length > 0 ? release : undefined, undo);
  }
  if (run.lock.length > 0) await releaseLock(run.t, run.result, release);
  markOutcome('succeeded', small);
  run.result.steps = run.t.resultSteps();
  run.t.finish(`**up** ${plan.profile} on ${plan.node} (${run.result.mode})`);
  return run.result;
}

/**
 * A cancel after the start began: stop the server it started (setsid keeps it starting after the step is gone), under
 * the node lock and never cut short by the cancel, before the compensation marks the node failed. A failure to stop
 * is a warning: the node is marked failed all the same, and the failure block shows the container.
 */
async function haltHalfStarted(run: UpRun): Promise<void> {
  await CancellationScope.nonCancellable(async () => {
    try {
      await run.t.run(FRAME_STEPS.halt, () => run.acts.halt(stopInput(run.plan), ...run.lock));
      run.result.halted = true;
    } catch (e) {
      run.result.warnings.push(`the half-started server was not stopped (${describeError(e).message}): pulse model down --node ${run.plan.node}`);
    }
  });
}
