/**
 * Named activity option presets. Every timeout is traceable to a spec value or to the heartbeat contract:
 *
 * - Every node step heartbeats at least every few seconds (activities/heartbeat.ts), so HEARTBEAT_TIMEOUT (30 s)
 *   is how long a SIGKILLed worker goes unnoticed before Temporal retries the step on another worker.
 * - The two waits (memory, readiness) are one long activity each that heartbeats every second (activities/wait-loop.ts
 *   WAIT_BEAT_MS), so their heartbeat timeout is WAIT_HEARTBEAT_TIMEOUT_S (5 s) and their first retry comes after
 *   500 ms: a worker SIGKILLed during a wait has its wait running again elsewhere within ~6 s. Their budget is the
 *   spec's (memTimeoutS, --timeout-s = READY_TIMEOUT_S + readyGraceS) and is enforced by the activity itself as
 *   elapsed monotonic time, carried across retries in heartbeat details (no worker's wall clock is trusted).
 *   startToClose is a per-attempt backstop; scheduleToClose, kept by the Temporal server over all attempts, bounds
 *   what crashes can add (the time between a dead worker's last heartbeat and the retry, which no worker measures).
 * - config/precondition/refused/timeout/verify failures are never retried (NON_RETRYABLE_FAILURES).
 * Workflow code: deterministic, no imports but types and @temporalio/workflow.
 */
import { ActivityCancellationType, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { ActivityOptions, RetryPolicy } from '@temporalio/workflow';
import type { PulseActivities } from '../activities/contract.js';
import type { RolloutActivities } from '../activities/rollout.js';
import { FRAME_STEPS, summaryOf } from '../runtime/steps/catalog.js';
import type { StepDef } from '../runtime/steps/catalog.js';
import { stateTaskQueue } from './definitions.js';
import { NON_RETRYABLE_FAILURES } from '../runtime/failures.js';

/** A dead worker is noticed within this time (activities heartbeat every ~5 s while a node script runs). */
export const HEARTBEAT_TIMEOUT_S = 30;
/**
 * A dead worker's WAIT is noticed within this time: a wait heartbeats every second (worker maxHeartbeatThrottleInterval
 * 2 s sends one at least every 2 s), so 5 s leaves a loaded worker 3 s of slack; a heartbeat costs an RPC, no history.
 */
export const WAIT_HEARTBEAT_TIMEOUT_S = 5;
/** Extra time over a wait's spec deadline before Temporal's own startToClose backstop fires. */
const WAIT_BACKSTOP_S = 120;
/**
 * What worker crashes may add to a wait over all its attempts: each costs up to the heartbeat timeout plus a retry
 * interval (<= 5 s) that no worker counts. Past budget + this, the server itself ends the wait (ScheduleToClose).
 */
const WAIT_RESUME_SLACK_S = 300;

/** Unreachable nodes, dropped ssh links and worker crashes are retried with a capped backoff (~3 min in all). */
export const NODE_RETRY: RetryPolicy = {
  initialInterval: '1s',
  backoffCoefficient: 2,
  maximumInterval: '30s',
  maximumAttempts: 8,
  nonRetryableErrorTypes: NON_RETRYABLE_FAILURES,
};

/** Local state writes (node state, gateway file) only fail on a lock or disk problem: retry briefly. */
const LOCAL_RETRY: RetryPolicy = {
  initialInterval: '500ms',
  backoffCoefficient: 2,
  maximumInterval: '5s',
  maximumAttempts: 10,
  nonRetryableErrorTypes: NON_RETRYABLE_FAILURES,
};

/** A rollout's guard, node plan and smoke gate: quick reads, retried briefly (a refusal never is). */
const ROLLOUT_RETRY: RetryPolicy = {
  initialInterval: '1s',
  backoffCoefficient: 2,
  maximumInterval: '10s',
  maximumAttempts: 5,
  nonRetryableErrorTypes: NON_RETRYABLE_FAILURES,
};

/** A watchdog check and its record: fewer attempts, the schedule's next run checks again anyway. */
const WATCHDOG_RETRY: RetryPolicy = { ...ROLLOUT_RETRY, maximumAttempts: 3 };

function nodeStepOptions(summary: string, startToCloseS: number): ActivityOptions {
  return {
    summary,
    startToCloseTimeout: `${startToCloseS}s`,
    heartbeatTimeout: `${HEARTBEAT_TIMEOUT_S}s`,
    retry: NODE_RETRY,
    // Wait until the node script is really killed before compensation touches the node.
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  };
}

/** Preflight, mkdir, write .env, start (setsid returns at once), verify: a few seconds each on a healthy node. */
function quickStep(summary: string): ActivityOptions {
  return nodeStepOptions(summary, 300);
}

/**
 * stop.sh waits for docker stop (and the recipe's own teardown): allow 10 minutes, or, where the server drains by
 * itself on SIGTERM (vLLM's --shutdown-timeout N, `graceS`), N plus the same margin.
 */
function stopStep(summary: string, graceS = 0): ActivityOptions {
  return nodeStepOptions(summary, Math.max(600, graceS + 600));
}

/**
 * The drain before a stop: a wait like the memory gate's, whose budget the activity enforces (the input's --drain-s or
 * the worker's nodes.json, which the workflow does not know: it passes the flag's value or the ceiling,
 * DRAIN_BUDGET_MAX_S). Its end is never a failure: a budget that runs out lets the stop go on.
 */
function drainWait(summary: string, budgetS: number): ActivityOptions {
  return waitStep(summary, budgetS);
}

/** Step 4: MemAvailable reaches the gate within plan.memory.timeoutS (spec memTimeoutS, default 600). */
function memoryWait(summary: string, timeoutS: number): ActivityOptions {
  return waitStep(summary, timeoutS);
}

/** Step 7: /v1/models answers 200 within plan.readiness.timeoutS (READY_TIMEOUT_S + readyGraceS by default). */
function readinessWait(summary: string, timeoutS: number): ActivityOptions {
  return waitStep(summary, timeoutS);
}

function waitStep(summary: string, timeoutS: number): ActivityOptions {
  return {
    ...nodeStepOptions(summary, timeoutS + WAIT_BACKSTOP_S),
    heartbeatTimeout: `${WAIT_HEARTBEAT_TIMEOUT_S}s`,
    scheduleToCloseTimeout: `${timeoutS + WAIT_RESUME_SLACK_S}s`,
    // A crashed attempt resumes from its checkpoint, so its retry need not wait: 0.5 s, 1 s, 2 s, then 5 s apart.
    retry: { ...NODE_RETRY, initialInterval: '500ms', maximumInterval: '5s', maximumAttempts: 20 },
  };
}

/**
 * Step 9, the 'starting' state and the compensation: local files under $PULSE_STATE_DIR, no node involved. They run
 * on the gateway host's own queue (definitions.ts stateTaskQueue), so with workers on several controller hosts the
 * node states and the gateway file are still written in one place. startToClose starts when the gateway worker
 * picks the task up: while no gateway worker polls, the deploy waits for one (visible in the UI as a pending
 * activity) rather than writing state on the wrong host.
 */
function stateStep(summary: string): ActivityOptions {
  return { summary, taskQueue: stateTaskQueue(workflowInfo().taskQueue), startToCloseTimeout: '30s', retry: LOCAL_RETRY };
}

/**
 * A rollout's or a watchdog's read on the gateway host's queue (the guard and the node plan read node states; the
 * watchdog's record writes one): 30 s, its own brief retry.
 */
function briefStateStep(summary: string, retry: RetryPolicy): ActivityOptions {
  return { summary, taskQueue: stateTaskQueue(workflowInfo().taskQueue), startToCloseTimeout: '30s', retry };
}

/**
 * The rollout's smoke gate (one request, heartbeating) and the watchdog's check (the status script has its own 45 s
 * per-node deadline and never fails for an unreachable node: it says so) on the node queue: 120 s.
 */
function briefNodeStep(summary: string, retry: RetryPolicy, heartbeat: boolean): ActivityOptions {
  return { summary, startToCloseTimeout: '120s', ...(heartbeat ? { heartbeatTimeout: `${HEARTBEAT_TIMEOUT_S}s` } : {}), retry };
}

/** The options of a catalog step on `node` (its summary, its preset); `budgetS` is a wait's spec budget. */
export function optionsOf(def: StepDef, node: string, budgetS = 0): ActivityOptions {
  const summary = summaryOf(def, node);
  switch (def.preset) {
    case 'quick':
      return quickStep(summary);
    case 'drain':
      return drainWait(summary, budgetS);
    case 'stop':
      return stopStep(summary, budgetS);
    case 'memory-wait':
      return memoryWait(summary, budgetS);
    case 'readiness-wait':
      return readinessWait(summary, budgetS);
    case 'state':
      return stateStep(summary);
    case 'rollout-state':
      return briefStateStep(summary, ROLLOUT_RETRY);
    case 'rollout-gate':
      return briefNodeStep(summary, ROLLOUT_RETRY, true);
    case 'watchdog-probe':
      return briefNodeStep(summary, WATCHDOG_RETRY, false);
    case 'watchdog-state':
      return briefStateStep(summary, WATCHDOG_RETRY);
  }
}

/** The steps every deploy has around its own (FRAME_STEPS): the plan check, the node lock, the compensation. */
export function frameActivities(node: string) {
  return {
    check: stepActivity(FRAME_STEPS.check, node),
    lock: stepActivity(FRAME_STEPS.lock, node),
    unlock: stepActivity(FRAME_STEPS.unlock, node),
    markFailed: stepActivity(FRAME_STEPS.compensate, node),
    halt: stepActivity(FRAME_STEPS.halt, node),
    failedStart: stepActivity(FRAME_STEPS.failedStart, node),
  };
}

/** Every activity a pulse workflow schedules (the deploys', the watchdog's and a rollout's). */
type WorkflowActivities = PulseActivities & RolloutActivities;

/**
 * The activity of a catalog step on `node` (for a rollout's guard: the step's nodes), with its own options (one proxy
 * per step: its preset and UI summary).
 */
export function stepActivity<D extends StepDef & { activity: keyof WorkflowActivities }>(def: D, node: string, budgetS?: number): WorkflowActivities[D['activity']] {
  const acts: Pick<WorkflowActivities, D['activity']> = proxyActivities<WorkflowActivities>(optionsOf(def, node, budgetS));
  return acts[def.activity as D['activity']];
}
