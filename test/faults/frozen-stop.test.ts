/**
 * The frozen daemon during the stop: the node's dockerd is SIGSTOPped the moment the recipe's stop.sh begins (its
 * first line records the call, then it asks docker). Every docker call of a step is meant to be bounded (prelude.sh
 * pulse_docker), and a step on a frozen daemon to fail within that bound and release the node's lock; but the
 * recipe's stop.sh runs its own `docker inspect`/`docker stop` with no bound, so the stop step waits on the frozen
 * daemon until the activity's StartToClose (600 s), the lock held. Expected: the down ends as docker-down within a
 * few bounds of the freeze. Real CLI, embedded Temporal server and worker, simulated sshd node with its Docker engine.
 */
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { Sim } from '../sim/index.js';
import { runCli, startCli } from '../helpers/cli.js';
import { startSimCli, stopSimCli } from '../helpers/sim-cli.js';

/** The bound of one docker call on a node (prelude.sh PULSE_DOCKER_BOUND_S). */
const DOCKER_BOUND_S = 10;
/** How long the test waits for the down before it calls the stop step hung (far beyond a few bounds). */
const HUNG_S = 120;
const NODE = 'simA';

let sim: Sim | null = null;
let dir = '';
let env: NodeJS.ProcessEnv = {};

before(async () => ({ sim, dir, env } = await startSimCli('pulse-frozen-stop-', { nodes: [NODE], readyDelayMs: 300 })));
after(() => stopSimCli(sim, dir));

test('a daemon that freezes as the recipe stop.sh begins: the down ends as docker-down within a few bounds, not at the step timeout', async () => {
  const node = sim!.node(NODE);
  const first = await runCli(['model', 'up', 'best', '--node', NODE], env);
  assert.equal(first.code, 0, first.stdout + first.stderr);
  const calls = path.join(node.paths.state, 'stop-calls');
  const size0 = statSync(calls).size;

  const run = startCli(['model', 'down', '--node', NODE], env);
  let frozenAt = 0;
  // Freeze at the recipe's first line (it is written before its first docker call), checked every 2 ms.
  const watch = setInterval(() => {
    if (frozenAt === 0 && statSync(calls).size > size0) {
      node.freezeDaemon(true, 600_000); // thawed below
      frozenAt = Date.now();
    }
  }, 2);
  try {
    const hung = new Promise<'hung'>((r) => setTimeout(() => r('hung'), HUNG_S * 1000).unref());
    const ended = await Promise.race([run.done, hung]);
    assert.ok(frozenAt > 0, 'the recipe stop.sh ran and the daemon was frozen');
    const endedS = (Date.now() - frozenAt) / 1000;
    assert.notEqual(ended, 'hung', `the down still ran ${endedS.toFixed(0)} s after the daemon froze (the recipe stop.sh's docker call has no bound):\n${run.output()}`);
    const r = ended as Exclude<typeof ended, 'hung'>;
    assert.equal(r.code, 14, r.stdout + r.stderr); // docker-down
    assert.match(r.stdout + r.stderr, /the Docker daemon did not answer within/);
    assert.ok(endedS < 4 * DOCKER_BOUND_S + 25, `the down ended ${endedS} s after the freeze`);
  } finally {
    clearInterval(watch);
    node.freezeDaemon(false);
    if (run.child.exitCode === null) run.child.kill('SIGKILL');
  }
});
