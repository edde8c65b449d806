/**
 * The steps of an up, shared by upWorkflow and rollbackWorkflow (a rollback is an up of a backup's .env: the same
 * catalog steps with the plan the worker made from the backup). Workflow code: deterministic, types only.
 */
import { ApplicationFailure, workflowInfo } from '@temporalio/workflow';
import type { LockUse, SparseStateInput, StateInput, UpStepPlan } from '../activities/contract.js';
import { FAILURES } from '../runtime/failures.js';
import { UP_STEPS, verdictOf } from '../runtime/steps/catalog.js';
import { frameActivities, stepActivity } from './options.js';
import { stopInput, type SagaState } from './saga.js';
import { drainAfterStop, drainBeforeStop, drainOutcome, drainWarnings, stopGraceOf } from './drain.js';
import type { StepTracker } from './tracker.js';
import type { UpInput } from './plan-ref.js';
import type { DeployResult, PreflightSummary, StartResult, UpPlan, WriteEnvResult } from '../runtime/model/index.js';

/** One proxy per step (runtime/steps/catalog.ts), so each activity carries its own preset and its UI summary. */
export function upActivities(plan: UpInput) {
  const { node } = plan;
  return {
    ...frameActivities(node),
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
  };
}

export interface UpRun {
  /** The workflow input (either form, plan-ref.ts UpInput), or the plan a rollback's worker made from the backup. */
  plan: UpInput;
  /**
   * What each node step gets: the UpPlanRef once the check returned its digest (PLAN_REF_PATCH), else the whole plan
   * (older deploys, and a rollback, whose plan the worker made from the backup and which has no check step).
   */
  step: UpStepPlan;
  acts: ReturnType<typeof upActivities>;
  t: StepTracker;
  saga: SagaState;
  result: DeployResult;
  pre: PreflightSummary | null;
  written: WriteEnvResult | null;
  started: StartResult | null;
  /** The second argument of every node step: [] for a deploy without the node lock (started before it existed). */
  lock: [] | [LockUse];
  /** Workflow time (ms) when the stop step was scheduled (the outage starts there), else null. */
  stopAt: number | null;
  /** --drain-s (0: --no-drain); undefined: the worker's nodes.json drainBudgetS. */
  drainS?: number;
}

/** Steps 1 to 9 of a plan whose check and lock are done. */
export async function runSteps(run: UpRun): Promise<void> {
  const { plan, step, acts, t } = run;
  run.pre = await t.run(UP_STEPS.preflight, () => acts.preflight(step, ...run.lock));
  const refused = verdictOf(UP_STEPS.preflight, run.pre);
  if (refused !== null) throw ApplicationFailure.create({ type: FAILURES.precondition.type, message: refused, nonRetryable: true });
  // Preflight decided it (runtime/steps/preflight.ts decideSkip: --restart, a changed .env or mount, ...).
  if (run.pre.sameIdentityRunning) {
    run.result.mode = 'same-identity';
    return finishSteps(run, null);
  }
  await t.run(UP_STEPS.mkdir, () => acts.mkdir(step, ...run.lock));
  // Part of step 3, before the saga arms: the requests in flight finish first (nothing is stopped yet).
  const drained = await drainBeforeStop(t, UP_STEPS.drain, stopInput(plan), run.drainS, run.lock, run.pre.container?.running === true);
  if (drained) {
    run.result.drain = drainOutcome(drained);
    run.result.warnings.push(...drainWarnings(drained));
  }
  run.saga.armed = true; // RUNTIME.md: a failure after the stop step STARTED marks the node failed.
  run.stopAt = Date.now();
  const grace = stopGraceOf(drained);
  const stop = grace > 0 ? stepActivity(UP_STEPS.stop, plan.node, grace) : acts.stop;
  drainAfterStop(run.result, drained, await t.run(UP_STEPS.stop, () => stop(stopInput(plan), ...run.lock)));
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
  // The estimate goes to the wait as a third argument (only then: a deploy without one schedules what it always did).
  const e = t.readinessEstimate();
  await t.run(UP_STEPS.readiness, () => (e ? acts.readiness(step, run.lock[0], { readinessEstimate: e }) : acts.readiness(step, ...run.lock)));
  const v = await t.run(UP_STEPS.verify, () => acts.verify({ plan: step, logPath }, ...run.lock));
  result.warnings.push(...v.warnings); // includes each pulse-proof not found (a warning, not a failure)
  const wrong = verdictOf(UP_STEPS.verify, v);
  if (wrong !== null) throw ApplicationFailure.create({ type: FAILURES.verify.type, message: wrong, nonRetryable: true });
  // After a start, the readiness wait's length (workflow clock) goes to the node state for the next estimate.
  const waited = run.started ? t.msOf('readiness') : null;
  const input = stateInput(run, 'up', null, {
    logPath, kvCacheLine: v.kvCacheLine, maxModelLen: v.maxModelLen, servedModelName: v.servedModelName,
    ...(waited !== null ? { readinessS: Math.round(waited / 1000) } : {}),
  });
  const pub = await t.run(UP_STEPS.publish, () => acts.publish(input));
  result.warnings.push(...pub.warnings);
  if (pub.serves) result.serves = pub.serves;
  result.ok = true;
  result.state = 'up';
}

export function previousProfile(run: UpRun): string | null {
  return run.pre?.currentIdentity?.profile ?? null;
}

/** The state write's input; since HISTORY_PATCH (run.saga.small) without the fields that are null (SparseStateInput). */
export function stateInput(run: UpRun, state: StateInput['state'], error: string | null, more: Partial<StateInput> = {}): StateInput | SparseStateInput {
  const { plan } = run;
  const input: StateInput = {
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
    ...more,
  };
  if (!run.saga.small) return input;
  return Object.fromEntries(Object.entries(input).filter(([, v]) => v !== null)) as SparseStateInput;
}

export function newResult(plan: Pick<UpPlan, 'node' | 'profile' | 'clientNotes'>): DeployResult {
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

/** A fresh run of `plan` (no step done yet). */
export function newRun(plan: UpInput, t: StepTracker, drainS?: number): UpRun {
  return {
    ...(drainS !== undefined ? { drainS } : {}), plan, step: plan, acts: upActivities(plan), t, saga: { armed: false }, result: newResult(plan), pre: null, written: null, started: null, lock: [], stopAt: null };
}
