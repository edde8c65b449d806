/**
 * The long readiness wait without sleeping for real: the REAL pollReadiness activity (scripted node that never
 * answers 200) on the time-skipping server, with the activity's clock and sleep virtual (each 15 s sleep advances
 * the clock 15 s at once). Proves: the deadline is plan.readiness.timeoutS (35 min) from the first probe, one
 * attempt polls to it (no retry storm, small history), the failure is a non-retryable Timeout that names the probes
 * and the last answer, and the deploy compensates.
 *
 * Why not the test server's own skipped time for the activity clock: a running activity holds time still, and
 * env.sleep() inside it unlocks skipping for the whole server, which then also jumps past the activity's own
 * heartbeat timeout; a heartbeating 35-minute activity is racy there. The virtual clock is exact.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { createActivities } from '../../activities/index.js';
import { fakeDeps, workerPlan } from './fake-deps.js';
import { runWorkflow, timeSkippingEnv } from './harness.js';

describe('readiness wait: 35 minutes of virtual time', () => {
  let env: TestWorkflowEnvironment;
  before(async () => {
    env = await timeSkippingEnv();
  });
  after(async () => {
    await env?.teardown();
  });

  it('times out after plan.readiness.timeoutS, non-retryable, with progress in the error, and compensates', async () => {
    const t0 = Date.parse('2026-09-23T10:15:00Z');
    let now = t0;
    let probes = 0;
    const { deps, mem } = fakeDeps(
      {
        probeReadiness: async () => {
          probes += 1;
          return { ready: false, httpStatus: 503, detail: 'loading weights' };
        },
      },
      { clock: { now: () => now, monotonic: () => now }, pollIntervalMs: 15_000, readinessProbeMs: 15_000, sleep: async (ms) => { now += ms; } },
    );
    const o = await runWorkflow(env, createActivities(deps), workerPlan({ readiness: { timeoutS: 2100 } }));
    assert.equal(o.ok, false);
    assert.equal(o.result.errorType, 'Timeout');
    assert.match(o.result.error ?? '', /^readiness: the server did not answer GET \/v1\/models with 200 within 2100 s \(141 probes; last answer: HTTP 503: loading weights\)$/);
    assert.equal(probes, 141); // 2100 s / 15 s + the first probe: one attempt, never restarted
    assert.equal((now - t0) / 1000, 2100);
    assert.equal(o.result.compensated, true);
    assert.equal(mem.states.get('spark2')?.state, 'failed');
    assert.deepEqual(mem.history.map((s) => s.state), ['starting', 'failed']);
  });

  it('readiness reached on a later probe is noticed at that probe (one-second polling by default)', async () => {
    let probes = 0;
    let now = 0;
    const { deps } = fakeDeps(
      { probeReadiness: async () => ({ ready: ++probes === 5, httpStatus: probes === 5 ? 200 : 503, detail: 'x' }) },
      { clock: { now: () => now, monotonic: () => now }, sleep: async (ms) => { now += ms; } },
    );
    const o = await runWorkflow(env, createActivities(deps), workerPlan());
    assert.equal(o.ok, true);
    assert.equal(probes, 5);
    assert.equal(now, 4000); // four 1 s intervals before the fifth probe
  });
});
