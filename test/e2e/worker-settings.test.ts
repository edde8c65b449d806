/**
 * The background worker's settings (cli/deploy-client/background-worker.ts WorkerSettings, docs/DEPLOYS.md "Where the worker
 * runs"): worker.json records what its authority reads; a CLI with another PULSE_PROFILES_DIR replaces an idle
 * worker with one of its own settings and deploys, and while the worker runs a deploy such a CLI is refused before
 * it starts anything, with the differing setting and the deploy to wait for named.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cp, readFile } from 'node:fs/promises';
import path from 'node:path';
import { pidAlive } from '../../runtime/state/pid.js';
import type { Sim } from '../sim/index.js';
import { runCli, startCli, waitForOutput } from '../helpers/cli.js';
import { startSimCli, stopSimCli } from '../helpers/sim-cli.js';
import { REPO_ROOT } from '../helpers/paths.js';
import { until } from '../helpers/until.js';

let sim: Sim | null = null;
let dir = '';
let env: NodeJS.ProcessEnv = {};
let other: NodeJS.ProcessEnv = {};
const stateDir = () => path.join(dir, 'state');
const SHIPPED = path.join(REPO_ROOT, 'runtime/qwen38/profiles');

interface Record {
  pid: number;
  settings?: { nodes: string; profilesDir: string; stateDir: string; sshConfig: string | null; lockLeaseS: string | null };
}
async function workerRecord(): Promise<Record> {
  return JSON.parse(await readFile(path.join(stateDir(), 'temporal', 'worker.json'), 'utf8')) as Record;
}

before(async () => {
  ({ sim, dir, env } = await startSimCli('pulse-worker-settings-', { nodes: ['simA', 'simB'], readyDelayMs: 300 }));
  const profiles = path.join(dir, 'profiles');
  await cp(SHIPPED, profiles, { recursive: true });
  other = { ...env, PULSE_PROFILES_DIR: profiles };
});

after(() => stopSimCli(sim, dir));

test('worker.json records the settings its authority reads; an idle worker with other settings is replaced, and the deploy runs', async () => {
  const first = await runCli(['model', 'up', 'best', '--node', 'simA'], env);
  assert.equal(first.code, 0, first.stdout + first.stderr);
  const old = await workerRecord();
  assert.deepEqual(old.settings, { nodes: env['PULSE_NODES'], profilesDir: SHIPPED, stateDir: stateDir(), sshConfig: env['PULSE_SSH_CONFIG'], lockLeaseS: null });

  const second = await runCli(['model', 'up', 'best', '--node', 'simA', '--restart'], other);
  assert.equal(second.code, 0, second.stdout + second.stderr);
  assert.match(second.stdout, new RegExp(`the background pulse worker \\(pid ${old.pid}\\) had other settings \\(PULSE_PROFILES_DIR: the worker's ${SHIPPED}, this command's ${other['PULSE_PROFILES_DIR']}\\) and no deploy open: stopped it`));
  assert.match(second.stdout, /up best on simA: ok/);
  const now = await workerRecord();
  assert.notEqual(now.pid, old.pid);
  assert.equal(now.settings?.profilesDir, other['PULSE_PROFILES_DIR']);
  assert.equal(pidAlive(old.pid), false, 'the replaced worker is gone');
});

test('a worker with other settings that runs a deploy: the CLI is refused before it starts anything, naming the setting and the deploy', async () => {
  const busy = await workerRecord(); // the previous test's: the copied profiles
  sim!.node('simB').setReadyDelay(600_000);
  const held = await runCli(['model', 'up', 'best', '--node', 'simB', '--detach'], other);
  assert.equal(held.code, 0, held.stdout + held.stderr);
  const watch = startCli(['model', 'watch', '--node', 'simB'], other);
  try {
    await waitForOutput(watch, /→ 7\/9 readiness on simB/);
    const before = await runCli(['model', 'history', '--node', 'simA', '--json'], env);
    const refused = await runCli(['model', 'up', 'best', '--node', 'simA', '--restart'], env);
    assert.equal(refused.code, 4, refused.stdout + refused.stderr);
    assert.match(refused.stderr, new RegExp(`the background pulse worker \\(pid ${busy.pid}\\) runs a deploy \\(on simB\\) and has other settings than this command, so it would refuse this plan: PULSE_PROFILES_DIR: the worker's ${other['PULSE_PROFILES_DIR']}, this command's ${SHIPPED}`));
    assert.match(refused.stderr, /wait until that deploy ends \(follow it: pulse model watch --node simB\)/);
    assert.equal((await workerRecord()).pid, busy.pid, 'the busy worker is left running');
    assert.equal(pidAlive(busy.pid), true);
    const after = await runCli(['model', 'history', '--node', 'simA', '--json'], env);
    assert.equal(after.stdout, before.stdout, 'no deploy of simA was started');
  } finally {
    sim!.node('simB').setReadyDelay(300);
    await runCli(['model', 'cancel', '--node', 'simB'], other);
    await watch.done;
  }
  // Once the deploy has ended the same command goes through: the idle worker is replaced.
  await until('the cancelled deploy of simB to close', async () => (await runCli(['model', 'watch', '--node', 'simB'], other)).stdout.includes('the last one has ended'), 120_000, { everyMs: 500 });
  const ok = await runCli(['model', 'up', 'best', '--node', 'simA', '--restart'], env);
  assert.equal(ok.code, 0, ok.stdout + ok.stderr);
  assert.match(ok.stdout, /had other settings .* and no deploy open: stopped it/);
});
