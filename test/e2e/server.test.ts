/**
 * `pulse server status|stop` through the CLI with the real embedded dev server and the background worker an up
 * started beside it (issue 30, also expected): status names the live pids, ports, database and log; stop refuses
 * while a deploy is open (and says what stopping would mean), stops both with --force and leaves no process and no
 * pid file behind; against a configured server there is nothing to manage and nothing is started.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { pidAlive } from '../../runtime/state/pid.js';
import type { Sim } from '../sim/index.js';
import { backgroundWorkerPid, runCli, startCli, waitForOutput } from '../helpers/cli.js';
import { startSimCli, stopSimCli } from '../helpers/sim-cli.js';
import { until } from '../helpers/until.js';

let sim: Sim | null = null;
let dir = '';
let env: NodeJS.ProcessEnv = {};
const temporalDir = () => path.join(dir, 'state', 'temporal');

/** server.json as the embedded server's start wrote it (what the operator should no longer have to read). */
function serverRecord(): { pid: number; port: number; uiPort: number; dbFile: string; logFile: string } {
  return JSON.parse(readFileSync(path.join(temporalDir(), 'server.json'), 'utf8')) as { pid: number; port: number; uiPort: number; dbFile: string; logFile: string };
}

before(async () => {
  ({ sim, dir, env } = await startSimCli('pulse-server-', { nodes: ['simA'], readyDelayMs: 200 }));
  env = { ...env, PULSE_WORKER_IDLE_S: '600' };
  const up = await runCli(['model', 'up', 'datagen', '--node', 'simA'], env);
  assert.equal(up.code, 0, up.stdout + up.stderr);
});
after(() => stopSimCli(sim, dir));

test('server status shows the embedded server\'s pid, address, Web UI, database and the background worker', async () => {
  const s = serverRecord();
  const worker = backgroundWorkerPid(path.join(dir, 'state'));
  assert.ok(worker !== null && pidAlive(worker));
  const r = await runCli(['server', 'status'], env);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, new RegExp(`^embedded Temporal server: running, pid ${s.pid}, since \\S+Z \\(.+ ago\\)$`, 'm'), r.stdout);
  assert.match(r.stdout, new RegExp(`^ {2}address: +127\\.0\\.0\\.1:${s.port}$`, 'm'));
  assert.match(r.stdout, new RegExp(`^ {2}Web UI: +http://127\\.0\\.0\\.1:${s.uiPort}$`, 'm'));
  assert.ok(r.stdout.includes(`  database:  ${s.dbFile} (`), r.stdout);
  assert.match(r.stdout, new RegExp(`^background worker: running, pid ${worker}, since `, 'm'));
  assert.match(r.stdout, /^ {2}idle exit: exits after 10m00s with no deploy open and no watchdog schedule \(PULSE_WORKER_IDLE_S\)$/m, r.stdout);
  assert.match(r.stdout, /^open deploys: none$/m);
  assert.match(r.stdout, /^watchdog schedules: none$/m);
  const j = JSON.parse((await runCli(['server', 'status', '--json'], env)).stdout) as { running: boolean; server: { pid: number; dbBytes: number }; worker: { pid: number; idleS: number } };
  assert.equal(j.running, true);
  assert.equal(j.server.pid, s.pid);
  assert.ok(j.server.dbBytes > 0);
  assert.deepEqual([j.worker.pid, j.worker.idleS], [worker, 600]);
});

test('against a configured server there is no embedded server to manage, and none is started', async () => {
  const other = { ...env, PULSE_STATE_DIR: path.join(dir, 'other-state'), TEMPORAL_ADDRESS: '127.0.0.1:1' };
  for (const verb of ['status', 'stop']) {
    const r = await runCli(['server', verb], other);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /^pulse uses the Temporal server at 127\.0\.0\.1:1 \(TEMPORAL_ADDRESS\): there is no embedded server to manage/);
  }
  assert.equal(existsSync(path.join(dir, 'other-state', 'temporal', 'server.json')), false);
});

test('stop refuses while a deploy is open; --force stops the worker and the server and leaves no pid file', async () => {
  sim!.node('simA').setReadyDelay(600_000);
  const up = startCli(['model', 'up', 'best', '--node', 'simA', '--detach'], env);
  await waitForOutput(up, /started up best on simA/);
  assert.equal((await up.done).code, 0);
  const s = serverRecord();
  const worker = backgroundWorkerPid(path.join(dir, 'state'));
  assert.ok(worker !== null);
  await until('the deploy is open', async () => /^open deploys: 1 \(simA\)$/m.test((await runCli(['server', 'status'], env)).stdout), 60_000, { everyMs: 500 });

  const refused = await runCli(['server', 'stop'], env);
  assert.equal(refused.code, 4, refused.stdout + refused.stderr);
  assert.match(refused.stderr, /the embedded Temporal server has 1 deploy\(s\) open \(simA\): not stopping it/);
  assert.match(refused.stderr, /the deploy on simA pauses where it is: it is durable in the server's database and resumes when pulse next starts the server/);
  assert.match(refused.stderr, /pulse server stop --force/);
  assert.ok(pidAlive(s.pid) && pidAlive(worker), 'a refused stop stops nothing');

  const r = await runCli(['server', 'stop', '--force'], env);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, new RegExp(`^stopped the background worker \\(pid ${worker}\\)$`, 'm'), r.stdout);
  assert.match(r.stdout, new RegExp(`^stopped the embedded Temporal server \\(pid ${s.pid}\\); its database stays: `, 'm'));
  assert.match(r.stdout, /^the deploy on simA pauses where it is/m);
  assert.equal(pidAlive(s.pid), false, 'the server is gone');
  assert.equal(pidAlive(worker), false, 'the worker is gone');
  assert.equal(existsSync(path.join(temporalDir(), 'server.json')), false, 'no stale server.json');
  assert.equal(existsSync(path.join(temporalDir(), 'worker.json')), false, 'no stale worker.json');
  assert.ok(existsSync(s.dbFile), 'the database (and the paused deploy in it) stays');

  const after = await runCli(['server', 'status'], env);
  assert.equal(after.code, 0, after.stdout + after.stderr);
  assert.match(after.stdout, /^embedded Temporal server: not running /m);
  assert.match(after.stdout, /^background worker: not running /m);
  assert.equal(existsSync(path.join(temporalDir(), 'server.json')), false, 'status starts nothing');
});
