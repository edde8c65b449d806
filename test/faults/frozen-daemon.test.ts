/**
 * The frozen daemon during a drain: an up that restarts a busy server drains it first, and the node's dockerd is
 * SIGSTOPped while the drain waits (it takes calls on its socket and never answers). The deploy ends within the
 * drain's budget plus the bound of one docker call (runtime/scripts/prelude.sh pulse_docker), as docker-down, naming
 * the daemon; nothing was stopped; the node's lock is released; and once the daemon is thawed (SIGCONT) a new deploy
 * succeeds. Before every docker call was bounded, the drain's probe hung in `docker container inspect` until the
 * activity's own timeout (the budget + 120 s), then its retries did the same: minutes to an hour, the lock held.
 * Real CLI, embedded Temporal server and worker, simulated sshd node with its real Docker engine.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Sim } from '../sim/index.js';
import { clearInflight, inflightRecords } from '../sim/vllm-metrics.js';
import { runCli, startCli, waitForOutput } from '../helpers/cli.js';
import { startSimCli, stopSimCli } from '../helpers/sim-cli.js';
import { streamChat } from '../helpers/stream-client.js';
import { until } from '../helpers/until.js';

/** The bound of one docker call on a node (prelude.sh PULSE_DOCKER_BOUND_S). */
const DOCKER_BOUND_S = 10;
/** The drain's budget: long enough that the freeze, not the budget, ends the drain. */
const BUDGET_S = 60;
const NODE = 'simA';

let sim: Sim | null = null;
let dir = '';
let env: NodeJS.ProcessEnv = {};

before(async () => ({ sim, dir, env } = await startSimCli('pulse-frozen-daemon-', { nodes: [NODE], readyDelayMs: 300 })));
after(() => stopSimCli(sim, dir));

test('the frozen daemon during a drain: the deploy ends within budget + bound as docker-down, the lock is released, and after SIGCONT a new deploy succeeds', async () => {
  const node = sim!.node(NODE);
  const first = await runCli(['model', 'up', 'best', '--node', NODE], env);
  assert.equal(first.code, 0, first.stdout + first.stderr);
  const stops = node.stopShCalls().length;
  const starts = node.startShCalls().length;

  // Two requests held in flight, so the drain waits on them.
  node.setControl({ generationMs: 200, holdGeneration: true });
  clearInflight(node.paths.state);
  const clients = Promise.all([streamChat(node.vllmPort), streamChat(node.vllmPort)]);
  await until('2 requests in flight', () => inflightRecords(node.paths.state).filter((r) => r.event === 'begin').length >= 2, 30_000);

  const run = startCli(['model', 'up', 'datagen', '--node', NODE, '--drain-s', String(BUDGET_S)], env);
  let frozenAt = 0;
  try {
    await waitForOutput(run, /… draining: 2 running/, 120_000);
    node.freezeDaemon(true, 300_000); // thawed below; the timer only guards a test that dies on the way
    frozenAt = Date.now();
    const r = await run.done;
    const endedS = (Date.now() - frozenAt) / 1000;
    const out = r.stdout + r.stderr;
    assert.equal(r.code, 14, out); // docker-down
    assert.match(out, new RegExp(`✗ 3/9 drain on ${NODE} .*the Docker daemon did not answer within ${DOCKER_BOUND_S} s`));
    assert.doesNotMatch(out, /attempt 2/, 'a silent daemon is not asked again by a retry');
    // One probe may have been on its way when the daemon froze: the bound, a probe interval, the ssh round trips and
    // the failure block's status (one more bound) — far inside the budget, which the freeze did not stretch.
    assert.ok(endedS < 2 * DOCKER_BOUND_S + 25, `the deploy ended ${endedS} s after the freeze`);
    assert.ok(endedS < BUDGET_S + DOCKER_BOUND_S, `the deploy ended ${endedS} s after the freeze`);
    assert.equal(node.stopShCalls().length, stops, 'nothing was stopped');
    assert.equal(node.startShCalls().length, starts, 'nothing was started');
  } finally {
    node.freezeDaemon(false);
    node.setControl({ holdGeneration: false });
  }
  // The held requests ran on (the drain never stopped the server).
  assert.deepEqual((await clients).map((c) => c.complete), [true, true]);

  // The lock was released by the failed deploy: the next one is not refused (exit 4), and the thawed daemon answers.
  const next = await runCli(['model', 'up', 'datagen', '--node', NODE], env);
  assert.equal(next.code, 0, next.stdout + next.stderr);
  assert.equal(node.startShCalls().length, starts + 1);
});
