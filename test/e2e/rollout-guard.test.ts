/**
 * The availability guard's two errors (issue 27 item 4) through the CLI, on simulated nodes with the embedded dev
 * server: on a fleet where nothing serves yet (no endpoint the gateway can reach) a rollout is not refused, dry-run
 * or real, since no step can take away an endpoint that serves; a plain `up` on the last endpoint that serves
 * goes ahead but says so, in its dry-run plan and on screen; and an endpoint the file enables whose server is stopped
 * serves nothing: bringing it up takes nothing away, so neither the plan, the guard nor the warning count it.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { stopEmbeddedServer } from '../../cli/deploy-client/embedded-server.js';
import { startSim, type Sim } from '../sim/index.js';
import { CONTAINER_NAME } from '../sim/paths.js';
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

test('the gateway node stopped by hand serves nothing: the rollout plan and its guard admit bringing it up, a plain up warns of nothing', async () => {
  // simA (the one endpoint the gateway reaches) is up again, then its server is stopped behind pulse's back: the
  // node state still says up, so the gateway file still enables it.
  sim!.writeNodesJson(env['PULSE_NODES']!, { protected: [], gatewayNode: 'simA' });
  const up = await runCli(['model', 'up', 'best', '--node', 'simA'], env);
  assert.equal(up.code, 0, up.stdout + up.stderr);
  sim!.node('simA').docker('stop', CONTAINER_NAME);
  const frag = await runCli(['model', 'fragment'], env);
  assert.match(frag.stdout, /simA/, frag.stdout);
  const dry = await runCli(['model', 'up', 'datagen', '--node', 'simB,simC,simA', '--dry-run'], env);
  assert.equal(dry.code, 0, dry.stdout + dry.stderr);
  assert.match(dry.stdout, /^not counted as serving: simA \(enabled in the gateway file, but down\)$/m, dry.stdout);
  assert.doesNotMatch(dry.stdout, /REFUSED/, dry.stdout);
  const before = starts('simA');
  const r = await runCli(['model', 'up', 'datagen', '--node', 'simB,simA'], env);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /rollout up datagen: SUCCEEDED/, r.stdout);
  assert.equal(starts('simA'), before + 1, 'the guard admitted simA: it started');
  // A plain up of the stopped node: no "the model has none" warning before a stop that finds nothing running.
  sim!.node('simA').docker('stop', CONTAINER_NAME);
  const plain = await runCli(['model', 'up', 'best', '--node', 'simA'], env);
  assert.equal(plain.code, 0, plain.stdout + plain.stderr);
  assert.doesNotMatch(plain.stdout + plain.stderr, /last endpoint/, plain.stdout);
});
