/**
 * The availability guard's two errors (issue 27 item 4) through the CLI, on simulated nodes with the embedded dev
 * server: on a fleet where nothing serves yet (no endpoint the gateway can reach) a rollout is not refused, dry-run
 * or real, since no step can take away an endpoint that serves; and a plain `up` on the last endpoint that serves
 * goes ahead but says so, in its dry-run plan and on screen.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { stopEmbeddedServer } from '../../cli/deploy-client/embedded-server.js';
import { startSim, type Sim } from '../sim/index.js';
import { killEmbeddedServerOnExit, removeDir, runCli, simCliEnv, tempDir } from '../helpers/cli.js';

let sim: Sim | null = null;
let dir = '';
let env: NodeJS.ProcessEnv = {};
const stateDir = () => path.join(dir, 'state');
const starts = (node: string): number => sim!.node(node).startShCalls().length;

before(async () => {
  dir = await tempDir('pulse-rollout-guard-');
  killEmbeddedServerOnExit(stateDir());
  sim = await startSim({ nodes: ['simA', 'simB', 'simC'], readyDelayMs: 300 });
  env = await simCliEnv(sim, dir);
  // No gateway node: every server listens on loopback, so the gateway reaches none of them: nothing serves.
  sim.writeNodesJson(env['PULSE_NODES']!, { protected: [], gatewayNode: null });
});

after(async () => {
  await stopEmbeddedServer(stateDir());
  await sim?.stop();
  await removeDir(dir);
});

test('nothing serves yet: the rollout is not refused by the guard, neither its dry-run nor the rollout itself', async () => {
  const dry = await runCli(['model', 'up', 'best', '--node', 'simC,simA,simB', '--dry-run'], env);
  assert.equal(dry.code, 0, dry.stdout + dry.stderr);
  assert.doesNotMatch(dry.stdout, /REFUSED/, dry.stdout);
  const r = await runCli(['model', 'up', 'best', '--node', 'simC,simA,simB'], env);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /rollout up best: SUCCEEDED/, r.stdout);
  assert.deepEqual(['simA', 'simB', 'simC'].map(starts), [1, 1, 1]);
});

test('a plain up (or down) on the last endpoint that serves says so in its dry-run plan and on screen, and still runs', async () => {
  // simA becomes the gateway node: its server (up since the rollout) is now the one endpoint that serves.
  sim!.writeNodesJson(env['PULSE_NODES']!, { protected: [], gatewayNode: 'simA' });
  const frag = await runCli(['model', 'fragment'], env);
  assert.equal(frag.code, 0, frag.stdout + frag.stderr);
  const line = /simA is the last endpoint that serves the model in the gateway backend file: while this up restarts its server the model has none/;
  const dry = await runCli(['model', 'up', 'datagen', '--node', 'simA', '--dry-run'], env);
  assert.equal(dry.code, 0, dry.stdout + dry.stderr);
  assert.match(dry.stdout, new RegExp(`availability: ${line.source}`), dry.stdout);
  const other = await runCli(['model', 'up', 'datagen', '--node', 'simB', '--dry-run'], env);
  assert.doesNotMatch(other.stdout, /last endpoint/, 'simB serves nothing (unreachable): no outage to warn of');
  const r = await runCli(['model', 'up', 'datagen', '--node', 'simA'], env);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, new RegExp(`^warning: ${line.source}`, 'm'), r.stdout);
  assert.equal(starts('simA'), 2);
  const down = await runCli(['model', 'down', '--node', 'simA'], env);
  assert.equal(down.code, 0, down.stdout + down.stderr);
  assert.match(down.stdout, /^warning: simA is the last endpoint that serves the model in the gateway backend file: after this down the model has none/m, down.stdout);
});
