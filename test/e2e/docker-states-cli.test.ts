/**
 * Docker's container states through the CLI on a simulated node (the node-step tests in test/node/docker-states.test.ts
 * cover each case in depth): an up whose server crashes under a restart policy fails fast as a precondition (docker
 * calls a crash loop "running"), not after the readiness timeout; a down of a paused server stops it and says what it
 * was and how it ended.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Sim } from '../sim/index.js';
import { runCli } from '../helpers/cli.js';
import { startSimCli, stopSimCli } from '../helpers/sim-cli.js';

let sim: Sim | null = null;
let dir = '';
let env: NodeJS.ProcessEnv = {};

before(async () => ({ sim, dir, env } = await startSimCli('pulse-docker-states-', { nodes: ['simA'], readyDelayMs: 300 })));

after(() => stopSimCli(sim, dir));

test('a crash loop under the recipe\'s restart policy: up fails fast with the restart count, not after the timeout', async () => {
  const node = sim!.node('simA');
  node.setRestartPolicy('on-failure');
  node.setFailure('crash-at-start');
  const r = await runCli(['model', 'up', 'best', '--node', 'simA', '--timeout-s', '600'], env);
  node.setFailure('none');
  node.setRestartPolicy(null);
  node.docker('rm', '-f', 'vllm-qwen38');
  assert.equal(r.code, 7, r.stdout + r.stderr); // not ready, for good (issue 30 item 3): never a precondition (5)
  assert.match(r.stdout + r.stderr, /container vllm-qwen38 (restarted during the readiness wait \(restart count \d+ → \d+|is exited \(exit 1)/);
  assert.match(r.stdout, /up best on simA: FAILED at readiness \(cause above\), node failed/);
});

test('down of a paused server: stopped, and the stop step says it was paused and how it ended', async () => {
  const node = sim!.node('simA');
  const up = await runCli(['model', 'up', 'best', '--node', 'simA'], env);
  assert.equal(up.code, 0, up.stdout + up.stderr);
  node.docker('pause', 'vllm-qwen38');
  const down = await runCli(['model', 'down', '--node', 'simA'], env);
  assert.equal(down.code, 0, down.stdout + down.stderr);
  assert.match(down.stdout, /✓ 1\/2 stop on simA .*: stopped \(was paused\): exit 0: it ended by itself or after a clean shutdown/);
  assert.equal(node.containers().filter((c) => c.State.Running).length, 0);
});
