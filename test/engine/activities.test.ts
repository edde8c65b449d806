/**
 * Activity edge, without a server (MockActivityEnvironment): the one failure classifier, wait resume from heartbeat
 * details (a crash keeps the first attempt's deadline and the attempt count), cancellation reaching the node step as
 * an aborted signal, and the state activities (workflow/run IDs, no secret in a stored error).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { classify, toFailure } from '../../activities/errors.js';
import { createActivities } from '../../activities/index.js';
import type { WaitCheckpoint } from '../../activities/wait-loop.js';
import { PulseError } from '../../runtime/errors.js';
import type { PulseErrorKind } from '../../runtime/errors.js';
import type { StateInput } from '../../activities/contract.js';
import { planDigest, upStart } from '../../runtime/plan/plan-check.js';
import type { UpPlan } from '../../runtime/model/index.js';
import { fakeDeps, workerPlan } from '../workflows/fake-deps.js';

const quiet = { logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} } };

describe('activities/errors.ts: one classification', () => {
  const table: [PulseErrorKind, string, boolean][] = [
    ['config', 'ConfigError', false], ['usage', 'ConfigError', false], ['refused', 'Refused', false],
    ['precondition', 'PreconditionFailed', false], ['unreachable', 'Unreachable', true], ['not-ready', 'NotReady', true],
    ['timeout', 'Timeout', false], ['script', 'ScriptFailed', true], ['internal', 'InternalError', true],
    ['temporary', 'TemporaryFailure', true], ['unauthorized', 'Unauthorized', false],
  ];
  for (const [kind, type, retry] of table) {
    it(`${kind} → ${type}, ${retry ? 'retryable' : 'non-retryable'}`, () => {
      const c = classify(new PulseError(kind, 'x'), 1);
      assert.equal(c.type, type);
      assert.equal(c.retry, retry);
    });
  }
  it('an unexplained script failure stops retrying at the third attempt', () => {
    assert.equal(classify(new PulseError('script', 'x'), 2).retry, true);
    assert.equal(classify(new PulseError('script', 'x'), 3).retry, false);
  });
  it('socket and ssh2 errors are Unreachable (retryable)', () => {
    const e = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:22'), { code: 'ECONNREFUSED' });
    assert.deepEqual([classify(e, 1).type, classify(e, 1).retry], ['Unreachable', true]);
    const t = Object.assign(new Error('Timed out while waiting for handshake'), { level: 'client-timeout' });
    assert.equal(classify(t, 1).type, 'Unreachable');
  });
  it('the failure carries no secret value and keeps the hint', () => {
    const f = toFailure(new PulseError('precondition', 'bad line API_KEY=sk-123 in .env', { hint: 'fix HF_TOKEN=hf_x' }), 1, false);
    assert.ok(f instanceof ApplicationFailure);
    assert.equal(f.type, 'PreconditionFailed');
    assert.equal(f.nonRetryable, true);
    assert.doesNotMatch(JSON.stringify([f.message, f.details]), /sk-123|hf_x/);
  });
});

describe('waits resume from heartbeat details', () => {
  it('a retried readiness wait keeps the first attempt budget and attempt count', async () => {
    const now = 1_000_000;
    const cp: WaitCheckpoint = { step: 'readiness', attempt: 7, lastAnswer: 'HTTP 503', elapsedS: 10, timeoutS: 10, elapsedMs: 10_000 };
    const { deps } = fakeDeps({ probeReadiness: async () => ({ ready: false, httpStatus: 503, detail: 'x' }) }, { clock: { now: () => now, monotonic: () => now } });
    const env = new MockActivityEnvironment({ attempt: 2, heartbeatDetails: cp }, quiet);
    const err = await env.run(createActivities(deps).pollReadiness, workerPlan({ readiness: { timeoutS: 10 } })).catch((e: unknown) => e);
    assert.ok(err instanceof ApplicationFailure);
    assert.equal(err.type, 'Timeout');
    assert.equal(err.nonRetryable, true);
    assert.match(err.message, /within 10 s \(8 probes/);
  });

  it('a wait resumed on a worker whose wall clock is 40 minutes ahead keeps the budget it had left', async () => {
    // Attempt 1 on worker A: probes for 6 s of its time, then "dies" (its last heartbeat is the checkpoint).
    let wallA = Date.parse('2026-12-02T10:00:00Z');
    let monoA = 50_000;
    const a = fakeDeps(
      { probeReadiness: async () => ({ ready: false, httpStatus: null, detail: 'connection refused' }) },
      { clock: { now: () => wallA, monotonic: () => monoA }, sleep: async (ms) => { if (monoA >= 56_000) throw new Error('worker A killed'); wallA += ms; monoA += ms; } },
    );
    const envA = new MockActivityEnvironment({ attempt: 1 }, quiet);
    let last: unknown;
    envA.on('heartbeat', (d: unknown) => (last = d));
    await envA.run(createActivities(a.deps).pollReadiness, workerPlan({ readiness: { timeoutS: 10 } })).catch(() => undefined);
    // Attempt 2 on worker B: wall clock 40 minutes ahead, its monotonic clock has another origin; ready on its 3rd probe.
    let wallB = wallA + 40 * 60_000;
    let monoB = 7;
    let probesB = 0;
    const b = fakeDeps(
      { probeReadiness: async () => ({ ready: ++probesB === 3, httpStatus: probesB === 3 ? 200 : 503, detail: 'x' }) },
      { clock: { now: () => wallB, monotonic: () => monoB }, sleep: async (ms) => { wallB += ms; monoB += ms; } },
    );
    const envB = new MockActivityEnvironment({ attempt: 2, heartbeatDetails: last }, quiet);
    const beats: WaitCheckpoint[] = [];
    envB.on('heartbeat', (d: WaitCheckpoint) => beats.push({ ...d }));
    const r = (await envB.run(createActivities(b.deps).pollReadiness, workerPlan({ readiness: { timeoutS: 10 } }))) as { ready: boolean };
    assert.equal(r.ready, true);
    assert.deepEqual(beats.map((x) => [x.attempt, x.elapsedMs]), [[8, 6000], [9, 7000], [10, 8000]]);
  });

  it('readiness keeps the container its first probe saw in the heartbeat: later probes and a resumed attempt get it', async () => {
    const first = { containerId: 'c0ffee', restartCount: 1 };
    const seenA: unknown[] = [];
    let t = 0;
    const a = fakeDeps(
      { probeReadiness: async (_s, _p, _o, seen) => (seenA.push(seen), { ready: false, httpStatus: null, detail: 'refused', container: seenA.length === 1 ? first : { containerId: 'c0ffee', restartCount: 9 } }) },
      { clock: { now: () => t, monotonic: () => t }, sleep: async (ms) => { if (t >= 2000) throw new Error('worker A killed'); t += ms; } },
    );
    const envA = new MockActivityEnvironment({ attempt: 1 }, quiet);
    let last: WaitCheckpoint | undefined;
    envA.on('heartbeat', (d: WaitCheckpoint) => (last = d));
    await envA.run(createActivities(a.deps).pollReadiness, workerPlan({ readiness: { timeoutS: 10 } })).catch(() => undefined);
    assert.deepEqual(seenA, [null, first, first], 'the first sight is kept, not replaced by later ones');
    assert.deepEqual(last?.memo, first);
    const seenB: unknown[] = [];
    const b = fakeDeps({ probeReadiness: async (_s, _p, _o, seen) => (seenB.push(seen), { ready: true, httpStatus: 200, detail: 'ok' }) }, { clock: { now: () => t, monotonic: () => t } });
    const envB = new MockActivityEnvironment({ attempt: 2, heartbeatDetails: last }, quiet);
    await envB.run(createActivities(b.deps).pollReadiness, workerPlan({ readiness: { timeoutS: 10 } }));
    assert.deepEqual(seenB, [first], 'the resumed attempt probes with the container the wait saw first');
  });

  it('a checkpoint written before elapsedMs existed resumes from its elapsedS', async () => {
    const old = { step: 'readiness', attempt: 3, lastAnswer: 'HTTP 503', elapsedS: 9, timeoutS: 10, startedAtMs: 1, deadlineMs: 2 };
    let t = 0;
    const { deps } = fakeDeps({ probeReadiness: async () => ({ ready: false, httpStatus: 503, detail: 'x' }) }, { clock: { now: () => t, monotonic: () => t }, sleep: async (ms) => { t += ms; } });
    const env = new MockActivityEnvironment({ attempt: 2, heartbeatDetails: old }, quiet);
    const err = await env.run(createActivities(deps).pollReadiness, workerPlan({ readiness: { timeoutS: 10 } })).catch((e: unknown) => e);
    assert.ok(err instanceof ApplicationFailure);
    assert.match(err.message, /within 10 s \(5 probes/); // 9 s + two more probes 1 s apart
  });

  /** A memory wait on a fake clock whose gate opens at sample `openAt`: its result and its heartbeats. */
  async function memoryWait(openAt: number): Promise<{ m: { memAvailableGiB: number }; beats: WaitCheckpoint[] }> {
    let t = 0;
    let samples = 0;
    const { deps } = fakeDeps(
      { sampleMemory: async (_s, gate) => ({ memAvailableGiB: ++samples >= openAt ? gate : gate - 10, gateGiB: gate, watermarkScaleFactor: 10 }) },
      { clock: { now: () => t, monotonic: () => t }, sleep: async (ms) => { t += ms; } },
    );
    const env = new MockActivityEnvironment(undefined, quiet);
    const beats: WaitCheckpoint[] = [];
    env.on('heartbeat', (d: WaitCheckpoint) => beats.push({ ...d }));
    const m = (await env.run(createActivities(deps).waitForMemory, workerPlan({ memory: { gateGiB: 100, timeoutS: 600 } }))) as { memAvailableGiB: number };
    return { m, beats };
  }

  it('heartbeats WaitProgress on every probe and succeeds when the gate is reached', async () => {
    const { m, beats } = await memoryWait(3);
    assert.equal(m.memAvailableGiB, 100);
    assert.deepEqual(beats.map((b) => [b.step, b.attempt, b.elapsedS, b.timeoutS]), [['memory', 1, 0, 600], ['memory', 2, 0, 600], ['memory', 3, 0, 600]]);
    assert.equal(beats[0]?.lastAnswer, 'MemAvailable 90 GiB < 100 GiB');
    // Right after the stop the memory is coming free: the first samples come 200 ms apart, later ones every second.
    assert.deepEqual(beats.map((b) => b.elapsedMs), [0, 200, 400]);
  });

  it('after its quick first second the memory wait samples once a second', async () => {
    const { beats } = await memoryWait(8);
    assert.deepEqual(beats.map((b) => b.elapsedMs), [0, 200, 400, 600, 800, 1000, 2000, 3000]);
  });
});

describe('node steps and state activities', () => {
  it('cancelling the activity aborts the signal the node step got (the node layer kills the remote group)', async () => {
    let seen: AbortSignal | undefined;
    let entered = false;
    const { deps } = fakeDeps({
      stopServer: (_s, _r, o) => new Promise((_resolve, reject) => {
        entered = true;
        seen = o?.signal;
        setTimeout(() => reject(new Error('no abort within 5 s')), 5000).unref();
        o?.signal?.addEventListener('abort', () => reject(new Error('killed')));
      }),
    });
    const env = new MockActivityEnvironment(undefined, quiet);
    const p = env.run(createActivities(deps).stopServer, { node: 'spark2', target: workerPlan().target, recipe: workerPlan().recipe, confirmed: false }).catch((e: unknown) => e);
    while (!entered) await new Promise((r) => setTimeout(r, 5));
    env.cancel();
    await p;
    assert.equal(seen?.aborted, true);
  });

  it('a step that names the workflow input (UpInputRef) runs the worker\'s plan for that input, checked as any plan', async () => {
    const ran: UpPlan[] = [];
    let input: unknown = upStart(workerPlan());
    const { deps } = fakeDeps({ makeDirs: async (_s, plan) => void ran.push(plan) }, { workflowInput: async () => input });
    const env = new MockActivityEnvironment(undefined, quiet);
    const acts = createActivities(deps);
    const ref = { node: 'spark2', from: 'workflow input' as const };
    assert.deepEqual(await env.run(acts.checkPlan, ref), { node: 'spark2' });
    assert.deepEqual(await env.run(acts.checkPlan, upStart(workerPlan())), { node: 'spark2', planDigest: planDigest(workerPlan()) });
    await env.run(acts.makeDirs, ref);
    // What ran is the worker's own plan (the .env rendered by the worker), not only what the input carried.
    assert.equal(ran[0]?.env.text, workerPlan().env.text);
    const refused = async (run: () => Promise<unknown>, why: RegExp): Promise<void> => {
      const err = await run().catch((e: unknown) => e);
      assert.ok(err instanceof ApplicationFailure, String(err));
      assert.equal(err.type, 'Refused');
      assert.equal(err.nonRetryable, true);
      assert.match(err.message, why);
    };
    await refused(() => env.run(acts.makeDirs, { node: 'spark1', from: 'workflow input' as const }), /names node "spark1", the workflow input "spark2"/);
    // A tampered input (a hand-made start) is refused naming the field, as the check names it for a plan passed in.
    const tampered = upStart(workerPlan());
    input = { ...tampered, recipe: { ...tampered.recipe, start: '/tmp/evil.sh' } };
    await refused(() => env.run(acts.checkPlan, ref), /recipe\.start \(plan "\/tmp\/evil\.sh"/);
    // Another workflow's input that is no plan at all (an attacker's workflow scheduling pulse's steps).
    input = [{ activity: 'startServer' }];
    await refused(() => env.run(acts.startServer, { plan: ref, deployId: 'x/y' }), /^plan refused by the worker: /);
    assert.equal(ran.length, 1);
  });

  it('a state write without its null fields (SparseStateInput) stores them as null', async () => {
    const { deps, mem } = fakeDeps({});
    const env = new MockActivityEnvironment(undefined, quiet);
    await env.run(createActivities(deps).publishState, { node: 'spark2', state: 'starting' as const, action: 'up' as const, profile: 'best', backupPath: '/srv/qwen38/.env.pulse-bak-x' });
    const s = mem.states.get('spark2');
    assert.equal(s?.state, 'starting');
    assert.equal(s?.backupPath, '/srv/qwen38/.env.pulse-bak-x');
    assert.deepEqual([s?.identity, s?.logPath, s?.kvCacheLine, s?.maxModelLen, s?.error, s?.previousProfile, s?.overlayManifest], [null, null, null, null, null, null, null]);
  });

  it('publishState stamps workflow and run IDs; markFailed stores failed without a secret value', async () => {
    const { deps, mem } = fakeDeps({});
    const env = new MockActivityEnvironment(undefined, quiet);
    const input: StateInput = {
      node: 'spark2', state: 'up', action: 'up', profile: 'best', identity: null, backupPath: null, logPath: null, kvCacheLine: null,
      maxModelLen: null, servedModelName: null, overlayManifest: null, error: null, previousProfile: null, fleet: workerPlan().fleet,
    };
    await env.run(createActivities(deps).markFailed, { ...input, error: 'start: API_KEY=sk-999 refused' });
    const s = mem.states.get('spark2');
    assert.equal(s?.state, 'failed');
    assert.equal(s?.workflowId, env.context.info.workflowExecution?.workflowId);
    assert.doesNotMatch(s?.error ?? '', /sk-999/);
    assert.equal(mem.fragments.length, 1);
  });
});
