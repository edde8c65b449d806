/**
 * upWorkflow: the nine steps of `pulse model up` as a durable saga (RUNTIME.md "What up does").
 *
 * Changing this file after release: Temporal replays old histories against new code, so a change to the step
 * sequence (a new activity, a removed one, a different order) must be gated: `if (patched('pulse-<change>')) {
 * new path } else { old path }`. Deploys already running keep the old path on replay; new ones take the new path.
 * When no history older than the patch can still be running, switch to `deprecatePatch('pulse-<change>')` and later
 * drop the old path. test/histories/*.json (replayed by test/workflows/replay.test.ts) fail on an ungated change.
 */
import { ApplicationFailure, patched, workflowInfo } from '@temporalio/workflow';
import type { LockUse, StateInput, UpStepPlan } from '../activities/contract.js';
import { FAILURES } from '../runtime/failures.js';
import { FRAME_STEPS, UP_STEPS } from '../runtime/steps/catalog.js';
import { AUTHORITY_PATCH } from './definitions.js';
import { stepActivity } from './options.js';
import { PLAN_REF_PATCH, upCheckInput, upPlanRef } from './plan-ref.js';
import { rollbackCommand } from './result.js';
import { failDeploy, lockInput, NODE_LOCK_PATCH, refuseUnconfirmed, releaseLock, takeLock } from './saga.js';
import type { SagaState } from './saga.js';
import { StepTracker } from './tracker.js';
import type { DeployResult, PreflightReport, StartResult, UpPlan, WriteEnvResult } from '../runtime/model/index.js';

/** One proxy per step (runtime/steps/catalog.ts), so each activity carries its own preset and its UI summary. */
function upActivities(plan: UpPlan) {
  const { node } = plan;
  return {
    check: stepActivity(FRAME_STEPS.check, node),
    lock: stepActivity(FRAME_STEPS.lock, node),
    unlock: stepActivity(FRAME_STEPS.unlock, node),
    preflight: stepActivity(UP_STEPS.preflight, node),
    mkdir: stepActivity(UP_STEPS.mkdir, node),
    stop: stepActivity(UP_STEPS.stop, node),
    memory: stepActivity(UP_STEPS.memory, node, plan.memory.timeoutS),
    writeEnv: stepActivity(UP_STEPS.writeEnv, node),
    start: stepActivity(UP_STEPS.start, node),
    readiness: stepActivity(UP_STEPS.readiness, node, plan.readiness.timeoutS),
    verify: stepActivity(UP_STEPS.verify, node),
    publish: stepActivity(UP_STEPS.publish, node),
    starting: stepActivity(UP_STEPS.starting, node),
    markFailed: stepActivity(FRAME_STEPS.compensate, node),
  };
}

interface UpRun {
  plan: UpPlan;
  /** What each node step gets: the UpPlanRef once the check returned its digest (PLAN_REF_PATCH), else the whole plan. */
  step: UpStepPlan;
  acts: ReturnType<typeof upActivities>;
  t: StepTracker;
  saga: SagaState;
  result: DeployResult;
  pre: PreflightReport | null;
  written: WriteEnvResult | null;
  started: StartResult | null;
  /** The second argument of every node step: [] for a deploy without the node lock (started before it existed). */
  lock: [] | [LockUse];
}


/** Brings plan.profile up on plan.node; returns the DeployResult, or fails with DeployFailed/DeployCancelled. */
export async function upWorkflow(plan: UpPlan): Promise<DeployResult> {
  const run: UpRun = {
    plan,
    step: plan,
    acts: upActivities(plan),
    t: new StepTracker(plan.node, 'up'),
    saga: { armed: false },
    result: newResult(plan),
    pre: null,
    written: null,
    started: null,
    lock: [],
  };
  const release = (): Promise<unknown> => run.acts.unlock(lockInput(plan, 'up'));
  try {
    refuseUnconfirmed(plan.node, plan.protected, plan.confirmed, 'up');
    // The worker is the authority: it rebuilds the plan from its own nodes.json and profiles before anything runs.
    if (patched(AUTHORITY_PATCH)) {
      // Since PLAN_REF_PATCH the check gets the plan without its .env and every later node step only the names and
      // the digest it returns (plan-ref.ts): the plan is in history once, as the workflow input.
      const narrow = patched(PLAN_REF_PATCH);
      const checked = await run.t.run(FRAME_STEPS.check, () => run.acts.check(narrow ? upCheckInput(plan) : plan));
      if (narrow && checked.planDigest) run.step = upPlanRef(plan, checked.planDigest);
    }
    // Then the node lock, before preflight (see NODE_LOCK_PATCH): a forged plan never even takes a lock.
    if (patched(NODE_LOCK_PATCH)) {
      run.lock = [{ nodeLock: true }];
      await takeLock(run.t, () => run.acts.lock(lockInput(plan, 'up')), () => (run.lock = []));
    }
    await runSteps(run);
  } catch (err) {
    const r = run.result;
    if (run.saga.armed) r.rollbackCommand = rollbackCommand(plan.node, previousProfile(run), plan.rollbackHint, plan.protected);
    // Before the stop nothing changed on the node: its state is what preflight saw, or unknown (never "down").
    if (!run.saga.armed) r.state = run.pre ? (run.pre.container?.running ? 'up' : 'down') : 'unchanged';
    throw await failDeploy(err, run.t, run.saga, r, (error) => run.acts.markFailed(stateInput(run, 'failed', error)), run.lock.length > 0 ? release : undefined);
  }
  if (run.lock.length > 0) await releaseLock(run.t, run.result, release);
  run.result.steps = run.t.resultSteps();
  run.t.finish(`**up** ${plan.profile} on ${plan.node} (${run.result.mode})`);
  return run.result;
}

async function runSteps(run: UpRun): Promise<void> {
  const { plan, step, acts, t } = run;
  run.pre = await t.run(UP_STEPS.preflight, () => acts.preflight(step, ...run.lock));
  if (!run.pre.ok) {
    const failed = run.pre.checks.filter((c) => !c.ok).map((c) => `${c.name}: ${c.detail}`);
    throw ApplicationFailure.create({ type: FAILURES.precondition.type, message: `preflight failed: ${failed.join('; ')}`, nonRetryable: true });
  }
  // Preflight decided it (runtime/steps/preflight.ts decideSkip: --restart, a changed .env or mount, ...).
  if (run.pre.sameIdentityRunning) {
    run.result.mode = 'same-identity';
    return finishSteps(run, null);
  }
  await t.run(UP_STEPS.mkdir, () => acts.mkdir(step, ...run.lock));
  run.saga.armed = true; // RUNTIME.md: a failure after the stop step STARTED marks the node failed.
  await t.run(UP_STEPS.stop, () => acts.stop({ node: plan.node, target: plan.target, recipe: plan.recipe, confirmed: plan.confirmed }, ...run.lock));
  await t.run(UP_STEPS.memory, () => acts.memory(step, ...run.lock));
  run.written = await t.run(UP_STEPS.writeEnv, () => acts.writeEnv(step, ...run.lock));
  run.result.backupPath = run.written.backupPath;
  const info = workflowInfo();
  // One deploy ID for every attempt and every worker: the node's start marker makes start.sh run once per deploy.
  const deployId = `${info.workflowId}/${info.firstExecutionRunId}`;
  run.started = await t.run(UP_STEPS.start, async () => {
    t.setReadinessEstimate((await acts.starting(stateInput(run, 'starting', null)))?.readiness);
    return acts.start({ plan: step, deployId }, ...run.lock);
  });
  await finishSteps(run, run.started.logPath);
}

/** Steps 7, 8, 9: also the whole deploy when the same identity already runs. */
async function finishSteps(run: UpRun, logPath: string | null): Promise<void> {
  const { step, acts, t, result } = run;
  await t.run(UP_STEPS.readiness, () => acts.readiness(step, ...run.lock));
  const v = await t.run(UP_STEPS.verify, () => acts.verify({ plan: step, logPath }, ...run.lock));
  result.warnings.push(...v.warnings); // includes each pulse-proof not found (a warning, not a failure)
  if (!v.ok) throw ApplicationFailure.create({ type: FAILURES.verify.type, message: `verify failed: ${v.problems.join('; ')}`, nonRetryable: true });
  // After a start, the readiness wait's length (workflow clock) goes to the node state for the next estimate.
  const waited = run.started ? t.msOf('readiness') : null;
  const input = {
    ...stateInput(run, 'up', null), logPath, kvCacheLine: v.kvCacheLine, maxModelLen: v.maxModelLen, servedModelName: v.servedModelName,
    ...(waited !== null ? { readinessS: Math.round(waited / 1000) } : {}),
  };
  const pub = await t.run(UP_STEPS.publish, () => acts.publish(input));
  result.warnings.push(...pub.warnings);
  result.ok = true;
  result.state = 'up';
}

function previousProfile(run: UpRun): string | null {
  return run.pre?.currentIdentity?.profile ?? null;
}

function stateInput(run: UpRun, state: StateInput['state'], error: string | null): StateInput {
  const { plan } = run;
  return {
    node: plan.node,
    state,
    action: 'up',
    profile: plan.profile,
    identity: plan.env.identity,
    backupPath: run.written?.backupPath ?? null,
    logPath: run.started?.logPath ?? null,
    kvCacheLine: null,
    maxModelLen: null,
    servedModelName: null,
    overlayManifest: plan.overlay?.manifest ?? null,
    error,
    previousProfile: previousProfile(run),
    previousIdentity: run.pre?.currentIdentity ?? null,
  };
}

function newResult(plan: UpPlan): DeployResult {
  return {
    ok: false,
    node: plan.node,
    action: 'up',
    profile: plan.profile,
    mode: 'full',
    state: 'starting',
    backupPath: null,
    rollbackCommand: null,
    error: null,
    warnings: [],
    clientNotes: plan.clientNotes,
    steps: [],
    errorType: null,
    compensated: false,
  };
}
