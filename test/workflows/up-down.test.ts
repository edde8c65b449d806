/**
 * Workflow tier: upWorkflow/downWorkflow against the time-skipping test server with fake activities. Proves the
 * step order (full and same-identity), the workflow's own refusal of a protected node, the saga (compensation after
 * the stop began, never before), cancellation compensating, verify failures, and the progress query.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Context } from '@temporalio/activity';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { DEPLOY_CANCELLED, DEPLOY_FAILED } from '../../runtime/failures.js';
import type { DeployProgress } from '../../runtime/model/index.js';
import type { UpStepPlan } from '../../activities/contract.js';
import { downPlan, fakeActivities, hangUntilCancelled, nonRetryable, planOf, preflight, upPlan } from './fixtures.js';
import { runWorkflow, timeSkippingEnv } from './harness.js';

/** The plan check, then the node lock: taken before anything on the node, released last (also after a compensation). */
const locked = (calls: string[]): string[] => ['checkPlan', 'acquireNodeLock', ...calls, 'releaseNodeLock'];
const FULL = locked(['runPreflight', 'makeDirs', 'drainServer', 'stopServer', 'waitForMemory', 'writeEnv', 'publishState:starting', 'startServer', 'pollReadiness', 'verifyServer', 'publishState:up']);

describe('upWorkflow and downWorkflow (time-skipping server, fake activities)', () => {
  let env: TestWorkflowEnvironment;
  before(async () => {
    env = await timeSkippingEnv();
  });
  after(async () => {
    await env?.teardown();
  });

  it('runs the nine steps in order, starting once with a per-deploy ID, and publishes up', async () => {
    const f = fakeActivities();
    const o = await runWorkflow(env, f.acts, upPlan());
    assert.equal(o.ok, true);
    assert.deepEqual(f.calls, FULL);
    assert.equal(o.result.mode, 'full');
    assert.equal(o.result.state, 'up');
    assert.equal(o.result.backupPath, '/srv/qwen38/.env.pulse-bak-20260923T101500Z');
    assert.deepEqual(o.result.clientNotes, ['use cache_salt']);
    assert.equal(f.starts.length, 1);
    assert.equal(f.starts[0]?.deployId, `${o.workflowId}/${o.runId}`);
    const up = f.states.at(-1);
    assert.equal(up?.state, 'up');
    assert.equal(up?.kvCacheLine, 'GPU KV cache size: 1 tokens');
    assert.equal(up?.previousProfile, 'datagen');
    assert.deepEqual(o.result.steps.map((s) => s.step), ['check', 'lock', 'preflight', 'mkdir', 'drain', 'stop', 'memory', 'write-env', 'start', 'readiness', 'verify', 'publish', 'unlock']);
  });

  it('same identity running: only steps 1, 7, 8, 9; --restart forces the full path', async () => {
    const same = fakeActivities({}, preflight({ sameIdentityRunning: true }));
    const o = await runWorkflow(env, same.acts, upPlan());
    assert.equal(o.ok, true);
    assert.equal(o.result.mode, 'same-identity');
    assert.deepEqual(same.calls, locked(['runPreflight', 'pollReadiness', 'verifyServer', 'publishState:up']));
    // --restart is preflight's decision (runtime/steps/preflight.ts decideSkip), as the real step answers it.
    const restart = fakeActivities({ runPreflight: async (p: UpStepPlan) => preflight((await planOf(p)).restart ? { sameIdentityRunning: false, restartReason: '--restart given' } : { sameIdentityRunning: true }) });
    await runWorkflow(env, restart.acts, upPlan({ restart: true }));
    assert.deepEqual(restart.calls, FULL);
  });

  it('refuses a protected node without --yes in the workflow itself: no activity runs', async () => {
    const f = fakeActivities();
    const o = await runWorkflow(env, f.acts, upPlan({ protected: true, confirmed: false }));
    assert.equal(o.ok, false);
    assert.equal(o.failure?.type, DEPLOY_FAILED);
    assert.equal(o.result.errorType, 'Refused');
    assert.match(o.result.error ?? '', /protected.*--yes/);
    assert.deepEqual(f.calls, []);
    const d = fakeActivities();
    const od = await runWorkflow(env, d.acts, downPlan({ protected: true }));
    assert.equal(od.result.errorType, 'Refused');
    assert.deepEqual(d.calls, []);
    const yes = fakeActivities();
    assert.equal((await runWorkflow(env, yes.acts, upPlan({ protected: true, confirmed: true }))).ok, true);
  });

  it('a failure after the stop began compensates: node failed, endpoint disabled, backup and rollback in the result', async () => {
    const f = fakeActivities({ startServer: async () => { throw nonRetryable('PreconditionFailed', 'image missing'); } });
    const o = await runWorkflow(env, f.acts, upPlan());
    assert.equal(o.ok, false);
    assert.equal(o.failure?.type, DEPLOY_FAILED);
    assert.equal(o.failure?.message, 'start: image missing');
    assert.deepEqual(f.calls, [...FULL.slice(0, 10), 'markFailed', 'releaseNodeLock']);
    assert.equal(o.result.compensated, true);
    assert.equal(o.result.state, 'failed');
    assert.equal(o.result.errorType, 'PreconditionFailed');
    assert.equal(o.result.backupPath, '/srv/qwen38/.env.pulse-bak-20260923T101500Z');
    assert.equal(o.result.rollbackCommand, 'pulse model up datagen --node spark2');
    const failed = f.states.at(-1);
    assert.equal(failed?.state, 'failed');
    assert.equal(failed?.error, 'start: image missing');
  });

  it('a failing stop step compensates too (the stop had begun); rollback falls back to the plan hint', async () => {
    const f = fakeActivities({ stopServer: async () => { throw nonRetryable('ScriptFailed', 'stop.sh exit 1'); } }, preflight({ currentIdentity: null }));
    const o = await runWorkflow(env, f.acts, upPlan({ rollbackHint: 'pulse model up capture --node spark2' }));
    assert.deepEqual(f.calls, locked(['runPreflight', 'makeDirs', 'drainServer', 'stopServer', 'markFailed']));
    assert.equal(o.result.rollbackCommand, 'pulse model up capture --node spark2');
    assert.equal(o.result.backupPath, null);
  });

  it('a failure before the stop does not compensate (node untouched)', async () => {
    const bad = fakeActivities({}, preflight({ ok: false, checks: [{ name: 'mount /x', ok: false, detail: 'missing' }] }));
    const o = await runWorkflow(env, bad.acts, upPlan());
    assert.equal(o.result.errorType, 'PreconditionFailed');
    assert.match(o.result.error ?? '', /mount \/x: missing/);
    assert.deepEqual(bad.calls, locked(['runPreflight']));
    assert.equal(o.result.compensated, false);
    assert.equal(o.result.rollbackCommand, null);
    const mk = fakeActivities({ makeDirs: async () => { throw nonRetryable('Refused', 'no'); } });
    await runWorkflow(env, mk.acts, upPlan());
    assert.deepEqual(mk.calls, locked(['runPreflight', 'makeDirs']));
  });

  it('a verify problem fails the deploy and compensates; missing proofs are only warnings', async () => {
    const v = { ok: false, servedModelName: 'x', maxModelLen: 1, kvCacheLine: null, proofs: [], problems: ['served model is x, expected qwen38'], warnings: [] };
    const f = fakeActivities({ verifyServer: async () => v });
    const o = await runWorkflow(env, f.acts, upPlan());
    assert.equal(o.result.errorType, 'VerifyFailed');
    assert.deepEqual(f.calls.slice(-2), ['markFailed', 'releaseNodeLock']);
    const w = { ...v, ok: true, problems: [], warnings: ['pulse-proof not found in the container log: MTP shard r2: loaded'] };
    const ok = await runWorkflow(env, fakeActivities({ verifyServer: async () => w }).acts, upPlan());
    assert.equal(ok.ok, true);
    assert.deepEqual(ok.result.warnings, w.warnings);
  });

  it('cancelled before preflight ends: nothing compensated, and the node is "unchanged", never "down"', async () => {
    const f = fakeActivities({ runPreflight: hangUntilCancelled });
    const o = await runWorkflow(env, f.acts, upPlan(), async (h) => {
      while (!f.calls.includes('runPreflight')) await new Promise((r) => setTimeout(r, 20));
      await h.cancel();
    });
    assert.equal(o.failure?.type, DEPLOY_CANCELLED);
    assert.equal(o.result.compensated, false);
    assert.equal(o.result.state, 'unchanged');
    assert.deepEqual(f.calls, locked(['runPreflight'])); // the lock is released after a cancel too
  });

  it('a plan the worker refuses (checkPlan) runs no step: up and down end Refused, the node "unchanged"', async () => {
    const refuse = async (): Promise<never> => {
      throw nonRetryable('Refused', 'plan refused by the worker: recipe.start differs');
    };
    const up = fakeActivities({ checkPlan: refuse });
    const o = await runWorkflow(env, up.acts, upPlan());
    assert.equal(o.result.errorType, 'Refused');
    assert.equal(o.result.state, 'unchanged');
    assert.match(o.result.error ?? '', /^check: plan refused by the worker/);
    assert.deepEqual(up.calls, ['checkPlan']);
    const down = fakeActivities({ checkPlan: refuse });
    const d = await runWorkflow(env, down.acts, downPlan());
    assert.equal(d.result.errorType, 'Refused');
    assert.equal(d.result.state, 'unchanged');
    assert.deepEqual(down.calls, ['checkPlan']);
  });

  it('cancellation during readiness compensates and ends as DeployCancelled; the progress query shows the step', async () => {
    const f = fakeActivities({ pollReadiness: hangUntilCancelled });
    let seen: DeployProgress | null = null;
    const o = await runWorkflow(env, f.acts, upPlan(), async (h) => {
      while (!f.calls.includes('pollReadiness')) await new Promise((r) => setTimeout(r, 20));
      seen = await h.query<DeployProgress>('progress');
      await h.cancel();
    });
    assert.equal(o.failure?.type, DEPLOY_CANCELLED);
    assert.equal(o.result.errorType, 'Cancelled');
    assert.equal(o.result.compensated, true);
    assert.deepEqual(f.calls.slice(-2), ['markFailed', 'releaseNodeLock']);
    const p = seen as DeployProgress | null;
    assert.equal(p?.step, 'readiness');
    assert.deepEqual(p?.steps.map((s) => s.state), ['ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'running']);
  });

  it('the drain runs only before the stop of a running container; a cancel during it stops nothing and compensates nothing', async () => {
    // Nothing serves: no drain step at all (RUNTIME.md's steps as they were).
    const idle = fakeActivities({}, preflight({ container: { name: 'vllm_qwen38', running: false, status: 'exited', image: 'img', startedAt: null } }));
    assert.equal((await runWorkflow(env, idle.acts, upPlan())).ok, true);
    assert.ok(!idle.calls.includes('drainServer'), idle.calls.join(', '));
    // A cancel while the server drains: no stop, no compensation, the lock let go, the node still 'up'.
    const f = fakeActivities({ drainServer: hangUntilCancelled });
    const o = await runWorkflow(env, f.acts, upPlan(), async (h) => {
      while (!f.calls.includes('drainServer')) await new Promise((r) => setTimeout(r, 20));
      await h.cancel();
    });
    assert.equal(o.failure?.type, DEPLOY_CANCELLED);
    assert.equal(o.result.compensated, false);
    assert.equal(o.result.state, 'up');
    assert.deepEqual(f.calls, locked(['runPreflight', 'makeDirs', 'drainServer']));
    assert.ok(f.states.every((s) => s.state !== 'failed'));
  });

  it("vLLM's --shutdown-timeout N in the live .env (the drain reads it): the stop step gets N s more before it times out", async () => {
    const seen: number[] = [];
    const drained = { source: 'metrics' as const, budgetS: 300, waitedS: 0, idle: true, atStart: 0, drained: 0, cut: 0, running: 0, waiting: 0, connections: null, detail: 'GET /metrics: 0 running, 0 waiting' };
    const stopServer = async () => {
      seen.push(Context.current().info.startToCloseTimeoutMs);
      return { wasRunning: true, containerGone: true };
    };
    const plain = fakeActivities({ drainServer: async () => ({ ...drained, shutdownTimeoutS: null }), stopServer });
    assert.equal((await runWorkflow(env, plain.acts, upPlan())).ok, true);
    const graceful = fakeActivities({ drainServer: async () => ({ ...drained, shutdownTimeoutS: 900 }), stopServer });
    assert.equal((await runWorkflow(env, graceful.acts, downPlan())).ok, true);
    assert.deepEqual(seen, [600_000, 1_500_000]);
  });

  it('node lock: every node step runs under it; held by another deploy: refused naming it, nothing else runs', async () => {
    const seen: unknown[] = [];
    const spy = fakeActivities({
      stopServer: async (...args: never[]) => { seen.push(args[1]); return { wasRunning: true, containerGone: true }; },
      pollReadiness: async (...args: never[]) => { seen.push(args[1]); return { ready: true, httpStatus: 200, detail: 'ok' }; },
    });
    assert.equal((await runWorkflow(env, spy.acts, upPlan())).ok, true);
    // Started without --verbose (DeployOptions): the steps also keep no raw records in history.
    assert.deepEqual(seen, [{ nodeLock: true, raw: false }, { nodeLock: true, raw: false }]);
    const holder = 'spark2: step lock: exit 10 (refused by a safety rule on the node): locked by deploy pulse-model-spark2/r-1 from controller c2 (up) since 2026-12-02T18:00:00Z, lease until 2026-12-02T18:02:00Z; nothing was changed';
    const f = fakeActivities({ acquireNodeLock: async () => { throw nonRetryable('Refused', holder); } });
    const o = await runWorkflow(env, f.acts, upPlan());
    assert.equal(o.ok, false);
    assert.equal(o.result.errorType, 'Refused');
    assert.equal(o.result.error, `lock: ${holder}`);
    assert.equal(o.result.compensated, false);
    assert.deepEqual(f.calls, ['checkPlan', 'acquireNodeLock']); // no preflight, no stop, no state write, no release of a lock never held
    const d = fakeActivities({ acquireNodeLock: async () => { throw nonRetryable('Refused', holder); } });
    await runWorkflow(env, d.acts, downPlan());
    assert.deepEqual(d.calls, ['checkPlan', 'acquireNodeLock']);
  });

  it('node lock lost before a step (lease ran out, taken by another): that step fails untouched, compensated, released', async () => {
    const lost = 'spark2: step write-env: exit 10 (refused by a safety rule on the node): this deploy lost its lock (its lease ran out); now held by deploy x';
    const f = fakeActivities({ writeEnv: async () => { throw nonRetryable('Refused', lost); } });
    const o = await runWorkflow(env, f.acts, upPlan());
    assert.equal(o.result.errorType, 'Refused');
    assert.equal(o.result.compensated, true);
    assert.deepEqual(f.calls, locked(['runPreflight', 'makeDirs', 'drainServer', 'stopServer', 'waitForMemory', 'writeEnv', 'markFailed']));
  });

  it('down: stop then publish down; a failing stop marks the node failed', async () => {
    const f = fakeActivities();
    const o = await runWorkflow(env, f.acts, downPlan());
    assert.equal(o.ok, true);
    assert.deepEqual(f.calls, locked(['drainServer', 'stopServer', 'publishState:down']));
    assert.equal(o.result.state, 'down');
    const bad = fakeActivities({ stopServer: async () => { throw nonRetryable('ScriptFailed', 'stop.sh failed'); } });
    const ob = await runWorkflow(env, bad.acts, downPlan());
    assert.deepEqual(bad.calls, locked(['drainServer', 'stopServer', 'markFailed']));
    assert.equal(ob.result.state, 'failed');
    assert.equal(bad.states.at(-1)?.state, 'failed');
  });
});
