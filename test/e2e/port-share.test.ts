/**
 * Port sharing through the CLI (embedded dev server, in-process worker) on a simulated node: vLLM binds its port
 * with SO_REUSEPORT, so a stray old server of the same user (the sim's stray: a real process outside docker, bound
 * the same way) can share it. up refuses to start while something listens on the port (after the stop, before the
 * launch) and compensates; a stray that starts listening beside the new container fails verify, named; the normal
 * case proves that every socket on the port is the container's (docker exec lists them).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Sim } from '../sim/index.js';
import type { StrayServer } from '../sim/stray.js';
import { runCli } from '../helpers/cli.js';
import { savedNodeState, startSimCli, stopSimCli } from '../helpers/sim-cli.js';

let sim: Sim | null = null;
let dir = '';
let env: NodeJS.ProcessEnv = {};
const strays: StrayServer[] = [];
const nodeState = () => savedNodeState(dir, 'simA');

before(async () => ({ sim, dir, env } = await startSimCli('pulse-port-share-', { nodes: ['simA'], readyDelayMs: 300 })));

after(async () => {
  strays.forEach((s) => s.stop());
  await stopSimCli(sim, dir);
});

test('the normal case: verify proves that every socket on the port is the new container\'s', async () => {
  const r = await runCli(['model', 'up', 'best', '--node', 'simA', '--verbose'], env);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout + r.stderr, /"kind":"port","proven":true,"detail":"every socket on port \d+ \(1\) is container vllm-qwen38's \(pid \d+\), as docker exec lists them"/);
  assert.match(r.stdout + r.stderr, /"kind":"port-listener","inode":"\d+","uid":0,"address":"127\.0\.0\.1","owner":"container"/);
  assert.doesNotMatch(r.stdout, /could not prove/);
});

test('a stray server listening on the port before the start: up refuses the start, names it, and compensates', async () => {
  const node = sim!.node('simA');
  const stray = await node.startStray();
  strays.push(stray);
  const r = await runCli(['model', 'up', 'best', '--node', 'simA', '--restart'], env);
  stray.stop();
  assert.equal(r.code, 5, r.stdout + r.stderr);
  assert.match(r.stdout, /✗ 6\/9 start on simA/);
  assert.match(r.stdout + r.stderr, new RegExp(`port ${node.vllmPort} is in use before the start: 127\\.0\\.0\\.1:${node.vllmPort} \\(socket \\d+, uid 0\\) held by pid ${stray.pid} \\(uid 0: \\S*node \\S*vllm\\.js --sim-id=${stray.id} `));
  assert.match(r.stdout + r.stderr, /a vLLM started now would share it \(SO_REUSEPORT\)/);
  assert.match(r.stdout, /up best on simA: FAILED( at \w+)?( \(cause above\))?, node failed/);
  assert.equal((await nodeState()).state, 'failed');
  assert.equal(node.containers().filter((c) => c.State.Running).length, 0, 'nothing was started');
});

test('a stray that starts listening beside the new container: verify fails and names it', async () => {
  const node = sim!.node('simA');
  const stray = await node.startStray({ listen: 'after-start' });
  strays.push(stray);
  const r = await runCli(['model', 'up', 'best', '--node', 'simA', '--restart'], env);
  stray.stop();
  assert.equal(r.code, 9, r.stdout + r.stderr);
  assert.match(
    r.stdout + r.stderr,
    new RegExp(`port ${node.vllmPort} is shared with a server that is not container vllm-qwen38: 127\\.0\\.0\\.1 \\(socket \\d+, uid 0\\) held by pid ${stray.pid} \\(uid 0: \\S*node \\S*vllm\\.js --sim-id=${stray.id} `),
  );
  // verify completed as an activity but fails the deploy: its step line says so, never ✓ (the catalog's verdict).
  assert.match(r.stdout, /✗ 8\/9 verify on simA \([\d.ms]+\): failed: verify failed: port \d+ is shared/);
  assert.doesNotMatch(r.stdout, /✓ 8\/9 verify/);
  assert.match(r.stdout, /up best on simA: FAILED( at \w+)?( \(cause above\))?, node failed/);
});
