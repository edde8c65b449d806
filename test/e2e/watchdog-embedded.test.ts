/**
 * The watchdog on the embedded default (no configured server): `on` starts the background worker, which stays while
 * a watchdog schedule exists even past PULSE_WORKER_IDLE_S, and idles out after `off`.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { stopEmbeddedServer } from '../../cli/deploy-client/embedded-server.js';
import { pidAlive } from '../../runtime/state/pid.js';
import type { NodeState } from '../../runtime/model/index.js';
import { startSim, type Sim } from '../sim/index.js';
import { backgroundWorkerPid, killEmbeddedServerOnExit, removeDir, runCli, simCliEnv, tempDir } from '../helpers/cli.js';
import { until } from '../helpers/until.js';

let sim: Sim | null = null;
let dir = '';
let env: NodeJS.ProcessEnv = {};
const stateDir = () => path.join(dir, 'state');
const IDLE_S = 3;

async function checkedAt(): Promise<string> {
  try {
    return (JSON.parse(await readFile(path.join(stateDir(), 'nodes', 'simA.json'), 'utf8')) as NodeState).watchdog?.at ?? '';
  } catch {
    return '';
  }
}

before(async () => {
  dir = await tempDir('pulse-watchdog-embedded-');
  killEmbeddedServerOnExit(stateDir());
  sim = await startSim({ nodes: ['simA'], readyDelayMs: 200 });
  env = { ...(await simCliEnv(sim, dir)), PULSE_WORKER_IDLE_S: String(IDLE_S) };
  const up = await runCli(['model', 'up', 'datagen', '--node', 'simA'], env);
  assert.equal(up.code, 0, up.stdout + up.stderr);
});
after(async () => {
  await stopEmbeddedServer(stateDir());
  await sim?.stop();
  await removeDir(dir);
});

test('the background worker runs the checks past its idle time while the schedule exists, and idles out after off', async () => {
  const on = await runCli(['model', 'watchdog', 'on', '--node', 'simA', '--every', '2s'], env);
  assert.equal(on.code, 0, on.stdout + on.stderr);
  assert.match(on.stdout, /checks run on the background worker \(pid \d+/);
  const pid = backgroundWorkerPid(stateDir());
  assert.ok(pid !== null && pidAlive(pid));
  // Three idle periods after the first check, the same worker still checks.
  await until('a first check', async () => (await checkedAt()) !== '', 180_000, { everyMs: 300 });
  const later = new Date(Date.parse(await checkedAt()) + 3 * IDLE_S * 1000).toISOString();
  await until('a check three idle periods later', async () => (await checkedAt()) > later, 180_000, { everyMs: 300 });
  assert.ok(pidAlive(pid), 'the worker did not idle out while the schedule exists');
  const off = await runCli(['model', 'watchdog', 'off', '--node', 'simA'], env);
  assert.equal(off.code, 0, off.stdout + off.stderr);
  await until('the worker idles out after off', () => !pidAlive(pid), 180_000, { everyMs: 300 });
});
