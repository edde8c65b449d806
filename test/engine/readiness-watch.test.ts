/**
 * The readiness wait reacts to the server's log (activities/log-watch.ts): with the periodic probe set far longer
 * than any test runs, the wait still ends on the startup line (one probe after it), fails fast when the followed
 * log ends (the container stopped), heartbeats the phase the stream saw between probes, and a worker that begins
 * a graceful shutdown hands the wait back at once with its checkpoint. No time is asserted: probe counts, and the
 * wait's own elapsed time against the fallback period it could not have waited out.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createActivities } from '../../activities/index.js';
import type { WaitCheckpoint } from '../../activities/wait-loop.js';
import { HAND_BACK } from '../../activities/wait-loop.js';
import { LogWatch } from '../../activities/log-watch.js';
import { PulseError } from '../../runtime/errors.js';
import { fakeDeps, workerPlan } from '../workflows/fake-deps.js';

const quiet = { logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} } };
/** The fallback probe period of these tests: no test here may live long enough to see a second periodic probe. */
const NEVER_MS = 3_600_000;
const plan = workerPlan({ readiness: { timeoutS: 7200 } });

/** Resolves once `cond` holds (polled; generous, never a fixed sleep). */
async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 6000 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(cond(), 'condition never held');
}

describe('readiness follows the server log', () => {
  it('probes at once on "Application startup complete." without waiting for the periodic probe', async () => {
    let probes = 0;
    let serving = false;
    const tails: boolean[] = [];
    let emit: (line: string) => void = () => undefined;
    const { deps } = fakeDeps(
      {
        probeReadiness: async (_s, _p, _o, _seen, noLogTail) => (++probes, tails.push(noLogTail ?? false), serving ? { ready: true, httpStatus: 200, detail: 'ok' } : { ready: false, httpStatus: null, detail: 'refused' }),
        followServerLog: (_s, _p, onLine, o) => {
          emit = onLine;
          return new Promise<boolean>((resolve) => o?.signal?.addEventListener('abort', () => resolve(false)));
        },
      },
      { readinessProbeMs: NEVER_MS },
    );
    const env = new MockActivityEnvironment(undefined, quiet);
    const beats: WaitCheckpoint[] = [];
    env.on('heartbeat', (d: WaitCheckpoint) => beats.push({ ...d }));
    const done = env.run(createActivities(deps).pollReadiness, plan);
    await until(() => probes === 1 && beats.length > 0);
    emit('(APIServer pid=7) INFO 12-03 09:13:10 [api_server.py:1912] Starting vLLM API server 0 on http://0.0.0.0:8000');
    serving = true;
    emit('INFO:     Application startup complete.');
    const r = (await done) as { ready: boolean };
    assert.equal(r.ready, true);
    assert.equal(probes, 2, 'the first probe, then one on the line');
    assert.deepEqual(tails, [false, true], 'once the stream delivers lines, a probe no longer reads the log tail');
    const last = beats.at(-1);
    assert.ok(last && last.elapsedMs < NEVER_MS, 'ended before the fallback probe was due');
  });

  it('a server that answers the first probe (a same-identity up) starts no log follow', async () => {
    let probes = 0;
    let follows = 0;
    const { deps } = fakeDeps(
      {
        probeReadiness: async () => (++probes, { ready: true, httpStatus: 200, detail: 'ok' }),
        followServerLog: async () => (++follows, false),
      },
      { readinessProbeMs: NEVER_MS },
    );
    const env = new MockActivityEnvironment(undefined, quiet);
    const r = (await env.run(createActivities(deps).pollReadiness, plan)) as { ready: boolean };
    assert.equal(r.ready, true);
    assert.equal(probes, 1);
    assert.equal(follows, 0, 'no docker logs --follow channel for a server that already serves');
  });

  it('a follow that cannot run yet (start.sh still creating the container) starts again by itself, and its line still wakes the wait', async () => {
    let probes = 0;
    let follows = 0;
    let serving = false;
    let emit: ((line: string) => void) | null = null;
    const { deps } = fakeDeps(
      {
        probeReadiness: async () => (++probes, serving ? { ready: true, httpStatus: 200, detail: 'ok' } : { ready: false, httpStatus: null, detail: 'refused' }),
        followServerLog: async (_s, _p, onLine, o) => {
          if (++follows < 3) return false; // no such container yet
          emit = onLine;
          return new Promise<boolean>((resolve) => o?.signal?.addEventListener('abort', () => resolve(false)));
        },
      },
      { readinessProbeMs: NEVER_MS },
    );
    const env = new MockActivityEnvironment(undefined, quiet);
    const done = env.run(createActivities(deps).pollReadiness, plan);
    await until(() => emit !== null);
    serving = true;
    emit!('INFO:     Application startup complete.');
    assert.equal(((await done) as { ready: boolean }).ready, true);
    assert.equal(follows, 3);
    assert.equal(probes, 2);
  });

  it('a followed log that ends (the container stopped) probes at once, and the probe fails fast', async () => {
    let probes = 0;
    let end: ((ended: boolean) => void) | null = null;
    const { deps } = fakeDeps(
      {
        probeReadiness: async () => {
          if (++probes === 2) throw new PulseError('precondition', 'container vllm is exited (exit 1) before /v1/models answered');
          return { ready: false, httpStatus: null, detail: 'refused' };
        },
        followServerLog: () => new Promise<boolean>((resolve) => (end = resolve)),
      },
      { readinessProbeMs: NEVER_MS },
    );
    const env = new MockActivityEnvironment(undefined, quiet);
    const done = env.run(createActivities(deps).pollReadiness, plan).catch((e: unknown) => e);
    // The follow starts after the first probe said "not yet".
    await until(() => probes === 1 && end !== null);
    end!(true);
    const err = await done;
    assert.ok(err instanceof ApplicationFailure);
    assert.equal(err.type, 'PreconditionFailed');
    assert.equal(probes, 2);
  });

  it('heartbeats the phase the stream saw between probes, and keeps only that', async () => {
    let emit: ((line: string) => void) | null = null;
    let probes = 0;
    const { deps } = fakeDeps(
      {
        probeReadiness: async () => (++probes, { ready: false, httpStatus: null, detail: 'refused' }),
        followServerLog: (_s, _p, onLine, o) => {
          emit = onLine;
          return new Promise<boolean>((resolve) => o?.signal?.addEventListener('abort', () => resolve(false)));
        },
      },
      { readinessProbeMs: NEVER_MS },
    );
    const env = new MockActivityEnvironment(undefined, quiet);
    const beats: WaitCheckpoint[] = [];
    env.on('heartbeat', (d: WaitCheckpoint) => beats.push({ ...d }));
    const done = env.run(createActivities(deps).pollReadiness, plan).catch((e: unknown) => e);
    await until(() => probes === 1 && emit !== null);
    emit!('(EngineCore pid=9) INFO 12-03 09:10:00 [default_loader.py:267] Loading safetensors checkpoint shards:  61% Completed | 23/38 [00:10<00:06,  2.3it/s]');
    await until(() => beats.some((b) => b.phase?.id === 'weights'));
    const b = beats.find((x) => x.phase?.id === 'weights');
    assert.deepEqual(b?.phase, { id: 'weights', words: 'loading weights 23/38', done: 23, total: 38 });
    assert.match(b?.lastLine ?? '', /^Loading safetensors checkpoint shards: {2}61% Completed/);
    assert.equal(probes, 1, 'the phase came from the stream, not from a probe');
    env.cancel();
    await done;
  });

  it('a worker that begins a graceful shutdown hands the wait back at once (retryable, with its checkpoint)', async () => {
    const stopping = new AbortController();
    let probes = 0;
    const { deps } = fakeDeps(
      {
        probeReadiness: async () => (++probes, { ready: false, httpStatus: null, detail: 'refused' }),
        followServerLog: (_s, _p, _l, o) => new Promise<boolean>((resolve) => o?.signal?.addEventListener('abort', () => resolve(false))),
      },
      { readinessProbeMs: NEVER_MS, stopping: stopping.signal },
    );
    const env = new MockActivityEnvironment({ attempt: 3, heartbeatDetails: { step: 'readiness', attempt: 4, lastAnswer: 'refused', elapsedS: 9, timeoutS: 7200, elapsedMs: 9000 } }, quiet);
    const done = env.run(createActivities(deps).pollReadiness, plan).catch((e: unknown) => e);
    await until(() => probes === 1);
    stopping.abort();
    const err = await done;
    assert.ok(err instanceof ApplicationFailure);
    assert.equal(err.type, HAND_BACK);
    assert.equal(err.nonRetryable, false);
    const cp = err.details?.[0] as WaitCheckpoint;
    assert.equal(cp.attempt, 5, 'the resumed count goes on from the checkpoint');
    assert.ok(cp.elapsedMs >= 9000 && cp.elapsedMs < NEVER_MS);
  });

  it('a wake that comes while the wait probes is kept for the next pause, even with an older pause\'s promise left behind', async () => {
    let emit: (line: string) => void = () => undefined;
    const w = new LogWatch((onLine) => ((emit = onLine), new Promise<boolean>(() => undefined)), NEVER_MS, () => 0, new AbortController().signal);
    w.ensure();
    void w.woken(); // an earlier pause that ended by its sleep: nobody awaits this any more
    w.consume(); // the next probe starts...
    emit('INFO:     Application startup complete.'); // ...and the line comes while it runs
    let woke = false;
    await Promise.race([w.woken().then(() => (woke = true)), new Promise((r) => setImmediate(r))]);
    assert.equal(woke, true, 'the next pause ends at once');
    w.consume();
    let again = false;
    void w.woken().then(() => (again = true));
    await new Promise((r) => setImmediate(r));
    assert.equal(again, false, 'consumed by the probe that answered it');
    w.stop();
  });
});
