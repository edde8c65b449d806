/**
 * The node steps against each Docker behaviour that pulse must read right, over ssh, on the node's real Docker
 * engine (docs/SIMULATOR.md, "The Docker engine"): an image and a volume named like the container; readiness failing
 * fast on an exited or dead container, a replaced one and a restart count that grows; stop of a paused or dead
 * container, and the exit it read in words (0 after a drain, 130 when SIGTERM came while loading, 137 when the drain
 * outlasted `docker stop -t 10`); the phase read from the log's tail, redacted. A slow `removing` cannot be made on
 * demand by a real engine and is not tested here (docs/SIMULATOR.md says why).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { openSession } from '../../runtime/node/connect.js';
import { PulseError } from '../../runtime/errors.js';
import type { NodeSession } from '../../runtime/node/types.js';
import type { ReadinessSeen, UpPlan } from '../../runtime/model/index.js';
import { probeReadiness, startServer, stopServer } from '../../runtime/steps/index.js';
import type { SimNode } from '../sim/index.js';
import { PROFILE_IMAGE } from '../sim/paths.js';
import { clearInflight, inflightRecords } from '../sim/vllm-metrics.js';
import { until } from '../helpers/until.js';
import { harness } from './helpers.js';
import type { Harness } from './helpers.js';
import { fullUp } from './suite.js';

let h: Harness;
let s: NodeSession;
let n: SimNode;
let p: UpPlan;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const state = () => n.exec(`docker container inspect --format '{{.State.Status}}' ${n.containerName} 2>/dev/null || true`).trim();

async function untilState(want: string): Promise<void> {
  for (let i = 0; i < 200 && state() !== want; i++) await sleep(25);
  assert.equal(state(), want);
}

/** Probes (with the first container seen, as the wait does) until one fails; returns that failure. */
async function firstFailure(seen: ReadinessSeen | null = null): Promise<PulseError> {
  let first = seen;
  for (let i = 0; i < 150; i++) {
    try {
      const r = await probeReadiness(s, p, undefined, first);
      assert.equal(r.ready, false, 'this server never becomes ready');
      first ??= r.container ?? null;
    } catch (e) {
      assert.ok(e instanceof PulseError, String(e));
      return e;
    }
    await sleep(100);
  }
  assert.fail('readiness never failed');
}

/** The port accepts a connection (vLLM listens only once it serves). */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const c = connect(port, '127.0.0.1', () => (c.destroy(), resolve(true)));
    c.once('error', () => resolve(false));
  });
}

/** A server that died before it served: not ready for good (issue 30 item 3: never a precondition, exit 7 not 5). */
const precondition = (e: PulseError, re: RegExp) => {
  assert.equal(e.kind, 'not-ready', e.message);
  assert.equal(e.final, true, 'no retry of the wait');
  assert.match(e.message, re);
};

describe('node steps on docker states and exits (ssh)', () => {
  before(async () => {
    h = await harness(['spark2']);
    s = await openSession({ name: 'spark2', host: 'ssh', ssh: 'spark2' });
    n = h.sim.node('spark2');
    p = h.plan('spark2', 'datagen', { minMemGib: 100 });
    // The node .env of the plan, so every test can start the recipe on its own.
    await fullUp(s, p, 'docker-setup');
    await stopServer(s, p.recipe);
  });
  after(async () => {
    await s?.close();
    await h?.stop();
  });

  test('an image vllm-qwen38:latest and a volume vllm-qwen38 on the node: stop sees the container go, exit 0 after the drain', async () => {
    n.addImage(`${n.containerName}:latest`);
    n.addVolume(n.containerName);
    await fullUp(s, p, 'docker-image-1');
    const r = await stopServer(s, p.recipe);
    assert.deepEqual({ ...r, raw: undefined }, { wasRunning: true, containerGone: true, before: 'running', exitCode: 0, exitMeaning: 'exit 0: it ended by itself or after a clean shutdown', atSignal: null, atSignalSource: null, atSignalDetail: null, raw: undefined });
    const again = await stopServer(s, p.recipe);
    assert.deepEqual([again.wasRunning, again.containerGone, again.before, again.exitCode], [false, true, 'absent', null]);
  });

  test('readiness fails fast, with the state and the exit in words, on an exited and on a dead container', async () => {
    n.setFailure('crash-at-start');
    await startServer(s, p, 'docker-exited-1');
    precondition(await firstFailure(), /container vllm-qwen38 is exited \(exit 1: the server failed\) before \/v1\/models answered$/);
    const release = n.failRemoval();
    n.exec(`docker rm -f ${n.containerName} >/dev/null 2>&1 || true`);
    assert.equal(state(), 'dead');
    precondition(await firstFailure(), /container vllm-qwen38 is dead \(exit 1: /);
    n.setFailure('none');
    release();
    assert.equal((await stopServer(s, p.recipe)).containerGone, true, 'stop removes a dead container (rm -f again)');
  });

  test('readiness fails fast when the restart policy restarts a crashing server, and when the container was replaced', async () => {
    n.setFailure('crash-at-start');
    n.setRestartPolicy('on-failure');
    try {
      await startServer(s, p, 'docker-restart-1');
      // A container other than the one the wait saw first (the replaced check reads the id before anything else).
      const e = await firstFailure({ containerId: 'f'.repeat(64), restartCount: 0 });
      precondition(e, /container vllm-qwen38 was replaced during the readiness wait \(id ffffffffffff → [0-9a-f]{12}\)/);
      // The restart count grows under the policy; readiness then also ends the crash loop (docker stop).
      precondition(await firstFailure(), /container vllm-qwen38 restarted during the readiness wait \(restart count \d+ → \d+, now (running|restarting; last exit 1: the server failed)\): its restart policy restarts a server that dies before it serves/);
    } finally {
      n.setRestartPolicy(null);
      n.setFailure('none');
      await stopServer(s, p.recipe);
    }
  });

  // A CI run under load probed between docker run's create and its start: `created` with no State.Error is a server
  // on its way, so a replaced one is "not ready" for good like any other, never the node's precondition (that is
  // `created` with State.Error: the start failed, test/e2e/engine-states.test.ts).
  test('a container still created, State.Error empty, that is not the one the wait saw: replaced, not ready (not a precondition)', async () => {
    n.docker('create', '--name', n.containerName, PROFILE_IMAGE, '/bin/true');
    try {
      assert.equal(state(), 'created');
      precondition(await firstFailure({ containerId: 'f'.repeat(64), restartCount: 0 }), /container vllm-qwen38 was replaced during the readiness wait \(id ffffffffffff → [0-9a-f]{12}\)/);
    } finally {
      await stopServer(s, p.recipe);
    }
  });

  test('stop of a paused server: docker stop signals and unpauses it; the drain ends with exit 0', async () => {
    await fullUp(s, p, 'docker-paused-1');
    n.docker('pause', n.containerName);
    const r = await stopServer(s, p.recipe);
    assert.deepEqual([r.wasRunning, r.containerGone, r.before, r.exitCode], [true, true, 'paused', 0]);
  });

  test('stop while vLLM still loads: exit 130 in words', async () => {
    n.setFailure('never-ready');
    try {
      await startServer(s, p, 'docker-loading-1');
      await untilState('running');
      // The simulated vLLM answers SIGTERM as vLLM does from its first line on (test/sim/vllm.ts): once it has logged, it loads.
      await until('the server logs its load', () => n.exec(`docker logs ${n.containerName} 2>&1 | head -c 1`).length > 0, 20_000, { everyMs: 50 });
      const r = await stopServer(s, p.recipe);
      assert.equal(r.exitCode, 130);
      assert.match(r.exitMeaning ?? '', /^exit 130: ended by SIGINT; vLLM exits so when SIGTERM comes while it still loads the model$/);
    } finally {
      n.setFailure('none');
    }
  });

  // Issue 18: the probe sends back the last few KB of the container log; like every script output it is redacted.
  test('readiness reads the server phase from the log tail, and a secret in that log never leaves the node', async () => {
    const env = readFileSync(n.envPath, 'utf8');
    const secret = 'hf_phaseTailSecret0123456789';
    appendFileSync(n.envPath, `HF_TOKEN=${secret}\n`);
    n.setFailure('never-ready');
    try {
      await startServer(s, p, 'docker-phase-1');
      await untilState('running');
      let r = await probeReadiness(s, p);
      // The never-ready server hangs after its KV cache report (test/sim/vllm.ts).
      // Two lines give the kv-cache phase ("Available KV cache memory", then "GPU KV cache size"): wait for the second.
      for (let i = 0; i < 100 && !/^KV cache allocated/.test(r.phase?.words ?? ''); i++) {
        await sleep(50);
        r = await probeReadiness(s, p);
      }
      assert.match(r.phase?.words ?? '', /^KV cache allocated \([\d,]+ tokens\)$/, JSON.stringify({ ...r, raw: undefined }));
      const logPath = n.exec(`docker container inspect --format '{{.LogPath}}' ${n.containerName}`).trim();
      appendFileSync(logPath, `${JSON.stringify({ stream: 'stdout', log: `INFO 12-03 09:00:00 [x.py:1] token ${secret} in a line\n`, time: new Date().toISOString() })}\n`);
      r = await probeReadiness(s, p);
      assert.equal(r.lastLine, 'token <redacted:HF_TOKEN> in a line');
      assert.ok(r.phase, 'an unknown last line keeps the phase of the lines before it');
      assert.doesNotMatch(JSON.stringify(r), new RegExp(secret));
    } finally {
      n.setFailure('none');
      writeFileSync(n.envPath, env);
      await stopServer(s, p.recipe);
    }
  });

  test('a drain (--shutdown-timeout 30) that outlasts the recipe\'s docker stop -t 10: exit 137, killed after the timeout', async () => {
    const env = readFileSync(n.envPath, 'utf8');
    appendFileSync(n.envPath, 'EXTRA_VLLM_ARGS="--shutdown-timeout 30"\n');
    try {
      // A completion that takes 15 s is in flight: vLLM's drain lets it run up to its 30 s, past docker's 10.
      n.setControl({ generationMs: 15_000 });
      await startServer(s, p, 'docker-drain-1');
      for (let i = 0; i < 200 && !(await listening(n.vllmPort)); i++) await sleep(50);
      clearInflight(n.paths.state);
      n.exec(`(curl -s -m 90 -H 'content-type: application/json' -d '{"messages":[]}' http://127.0.0.1:${n.vllmPort}/v1/chat/completions >/dev/null 2>&1 </dev/null &)`);
      await until('the completion in flight', () => inflightRecords(n.paths.state).some((r) => r.event === 'begin'), 30_000);
      const t0 = Date.now();
      const r = await stopServer(s, p.recipe);
      assert.ok(Date.now() - t0 >= 9000, `docker stop waited its 10 s: ${JSON.stringify({ ...r, raw: undefined })}`);
      assert.equal(r.exitCode, 137);
      assert.match(r.exitMeaning ?? '', /^exit 137: killed by SIGKILL \(docker stop timed out and killed it/);
    } finally {
      n.setControl({ generationMs: 0 });
      writeFileSync(n.envPath, env);
    }
  });

  test('a removal that fails (dead) is retried by stop until it succeeds', async () => {
    await fullUp(s, p, 'docker-dead-1');
    const release = n.failRemoval();
    // The removal fails while the flag is set; it is cleared once the container is dead, as an operator would.
    const watch = (async () => {
      for (let i = 0; i < 400 && state() !== 'dead'; i++) await sleep(25);
      release();
    })();
    const d = await stopServer(s, p.recipe);
    await watch;
    assert.deepEqual([d.wasRunning, d.containerGone, d.before, d.exitCode], [true, true, 'running', 0]);
    assert.equal(state(), '', 'the dead container was removed again');
  });
});
