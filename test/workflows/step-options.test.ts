/**
 * The rollout's and the watchdog's steps schedule their activities with the catalog's rows (runtime/steps/catalog.ts
 * ROLLOUT_STEPS, WATCHDOG_STEPS) through workflows/options.ts: this reads the ActivityTaskScheduled events of real
 * runs (time-skipping server, fake activities) and checks each step's type and summary against its catalog row, and
 * that its recorded options are its preset's: steps of one preset are scheduled alike, each is retried a bounded number
 * of times, only the gate heartbeats. The seconds themselves are not restated here: they are decisions of
 * workflows/options.ts, each with its reason there, and a test that froze them would only be edited along with them.
 * The gate texts are the ones the CLI's closing table prints (test/e2e/rollout.test.ts matches `verify passed, smoke answered`).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { WorkflowHandle } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import type { RolloutActivities } from '../../activities/rollout.js';
import type { RolloutProgress, RolloutRequest, WatchdogCheck, WatchdogOutcome, WatchdogRequest } from '../../runtime/model/index.js';
import type { SmokeResult } from '../../runtime/status/smoke.js';
import { WORKFLOW_BUNDLE_PATH } from '../../worker/main.js';
import { fakeActivities, upPlan } from './fixtures.js';
import { timeSkippingEnv } from './harness.js';
import { ROLLOUT_STEPS, WATCHDOG_STEPS, summaryOf } from '../../runtime/steps/catalog.js';

interface Scheduled {
  type: string;
  summary: string | null;
  queue: string;
  startToClose: string;
  heartbeat: string | null;
  attempts: number;
  initial: string;
  maxInterval: string;
}

const seconds = (d: { seconds?: unknown; nanos?: number | null } | null | undefined): string | null => (d ? `${Number(d.seconds ?? 0) + (d.nanos ?? 0) / 1e9}s` : null);

/** The scheduled activities of a closed run, in order, with the options that were recorded for them. */
async function scheduled(h: WorkflowHandle): Promise<Scheduled[]> {
  const events = (await h.fetchHistory()).events ?? [];
  return events.filter((e) => e.activityTaskScheduledEventAttributes).map((e) => {
    const a = e.activityTaskScheduledEventAttributes!;
    const s = e.userMetadata?.summary;
    return {
      type: a.activityType?.name ?? '',
      summary: s ? defaultPayloadConverter.fromPayload<string>(s as never) : null,
      queue: a.taskQueue?.name ?? '',
      startToClose: seconds(a.startToCloseTimeout) ?? '',
      heartbeat: seconds(a.heartbeatTimeout) === '0s' ? null : seconds(a.heartbeatTimeout),
      attempts: a.retryPolicy?.maximumAttempts ?? 0,
      initial: seconds(a.retryPolicy?.initialInterval) ?? '',
      maxInterval: seconds(a.retryPolicy?.maximumInterval) ?? '',
    };
  });
}

const secs = (t: string | null): number => Number((t ?? '').replace(/s$/, ''));
const retryOf = (s: Scheduled): [number, string, string] => [s.attempts, s.initial, s.maxInterval];

/** What any step's recorded options must be: a per-attempt limit, a bounded retry, a heartbeat shorter than the attempt. */
function sane(s: Scheduled): void {
  assert.ok(secs(s.startToClose) > 0, `${s.type}: startToClose ${s.startToClose}`);
  assert.ok(s.attempts > 1 && s.attempts < 50, `${s.type}: retried, a bounded number of times (${s.attempts})`);
  assert.ok(secs(s.initial) > 0 && secs(s.initial) <= secs(s.maxInterval), `${s.type}: backoff ${s.initial}..${s.maxInterval}`);
  if (s.heartbeat !== null) assert.ok(secs(s.heartbeat) < secs(s.startToClose), `${s.type}: heartbeat ${s.heartbeat} < ${s.startToClose}`);
}

const watchdogRequest: WatchdogRequest = { action: 'watchdog', version: 1, node: 'spark2', everyS: 60, after: 2, heal: false, healsPerHour: 1, confirmed: false };
const check: WatchdogCheck = {
  node: 'spark2', answered: true, error: null, container: null, http: true, httpSkipped: null, httpStatus: 200, healthOk: true, servedModels: ['qwen38'],
} as WatchdogCheck;
const outcome: WatchdogOutcome = { node: 'spark2', verdict: 'ok', reason: null, changed: null, record: null, heal: null, summary: 'ok' } as WatchdogOutcome;

const rolloutRequest: RolloutRequest = {
  action: 'up', version: 1, profile: 'best', nodes: ['spark2'], confirmed: false, experimental: false, restart: false, autoRollback: false,
  allowOutage: true, maxParallel: 1, timeoutS: null, minMemGib: null, verbose: false,
};

describe('the rollout and the watchdog schedule their steps with the catalog options', () => {
  let env: TestWorkflowEnvironment;
  before(async () => {
    env = await timeSkippingEnv();
  });
  after(async () => {
    await env?.teardown();
  });

  /** Runs `type` to its end on a fresh queue with the fakes; the run's handle. */
  async function run(type: string, args: unknown[], smoke: SmokeResult): Promise<{ h: WorkflowHandle; queue: string }> {
    const queue = `test-${randomUUID()}`;
    const rollout: RolloutActivities = {
      guardRolloutStep: async () => ({ serving: [], refused: null }),
      planRolloutNode: async () => upPlan(),
      smokeRolloutNode: async () => smoke,
    };
    const acts = {
      ...fakeActivities({ watchdogProbe: async () => check, watchdogRecord: async () => outcome }).acts,
      ...rollout,
    };
    const worker = await Worker.create({ connection: env.nativeConnection, taskQueue: queue, workflowBundle: { codePath: WORKFLOW_BUNDLE_PATH }, activities: acts });
    return worker.runUntil(async () => {
      const h = await env.client.workflow.start(type, { args, taskQueue: queue, workflowId: `${type}-${randomUUID().slice(0, 8)}` });
      await h.result().catch(() => undefined);
      return { h, queue };
    });
  }

  it('watchdog: the check and the record, each as its catalog row says, retried alike, neither heartbeating', async () => {
    const { h, queue } = await run('watchdogWorkflow', [watchdogRequest], { ok: true, error: null, latencyS: null } as SmokeResult);
    const got = await scheduled(h);
    assert.deepEqual(got.map((s) => [s.type, s.summary, s.queue]), [WATCHDOG_STEPS.check, WATCHDOG_STEPS.record].map((d) => [d.activity, summaryOf(d, 'spark2'), queue]));
    for (const s of got) sane(s);
    assert.deepEqual(got.map((s) => s.heartbeat), [null, null]);
    assert.deepEqual(retryOf(got[0]!), retryOf(got[1]!), 'one watchdog retry policy');
    assert.notEqual(got[0]!.startToClose, got[1]!.startToClose, 'the node check and the state record have presets of their own');
  });

  it('rollout: guard, plan and the smoke gate as their catalog rows say; guard and plan (one preset) alike; only the gate heartbeats', async () => {
    const { h, queue } = await run('rolloutWorkflow', [rolloutRequest], { ok: true, error: null, latencyS: 0.123 } as SmokeResult);
    const p = (await h.result()) as RolloutProgress;
    assert.equal(p.nodes[0]?.gate, 'verify passed, smoke answered in 123 ms');
    const defs = [ROLLOUT_STEPS.guard, ROLLOUT_STEPS.plan, ROLLOUT_STEPS.smoke];
    const own = (await scheduled(h)).filter((s) => defs.some((d) => d.activity === s.type));
    assert.deepEqual(own.map((s) => [s.type, s.summary, s.queue]), defs.map((d) => [d.activity, summaryOf(d, 'spark2'), queue]));
    for (const s of own) sane(s);
    const [guard, plan, gate] = own as [Scheduled, Scheduled, Scheduled];
    assert.deepEqual({ ...guard, type: '', summary: '' }, { ...plan, type: '', summary: '' }, 'guard and plan share the rollout-state preset');
    assert.deepEqual([guard.heartbeat, gate.heartbeat === null], [null, false], 'the gate heartbeats (a smoke request can hang), the state reads do not');
    assert.deepEqual(retryOf(gate), retryOf(guard), 'one rollout retry policy');
  });

  it('rollout: a failed smoke fails the gate with the catalog verdict and stops the rollout', async () => {
    const { h } = await run('rolloutWorkflow', [rolloutRequest], { ok: false, error: 'HTTP 500 from /v1/chat/completions', latencyS: null } as SmokeResult);
    const err = await h.result().then(() => null, (e: unknown) => e as { cause?: { details?: unknown[] } });
    const p = err?.cause?.details?.[0] as RolloutProgress | undefined;
    assert.equal(p?.outcome, 'failed');
    assert.equal(p?.nodes[0]?.status, 'failed');
    assert.equal(p?.nodes[0]?.gate, 'verify passed, smoke failed: HTTP 500 from /v1/chat/completions');
  });
});
