/**
 * The whole stack through `node bin/pulse-cli`: the embedded dev server, the background worker the CLI starts
 * beside it with the real activities, and the simulator's sshd nodes. Up reaches a verified server and writes
 * state + the gateway file; up again runs only steps 1, 7, 8, 9; down stops it; a never-ready node ends failed with
 * the backup path and the rollback command; Ctrl-C and a closed terminal, `--detach` and a killed CLI leave the
 * deploy running to its end; the background worker exits when idle and goes with its server.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { stopBackgroundWorker } from '../../cli/deploy-client/background-worker.js';
import { pidAlive } from '../../runtime/state/pid.js';
import { stopEmbeddedServer } from '../../cli/deploy-client/embedded-server.js';
import type { Sim } from '../sim/index.js';
import { backgroundWorkerPid, runCli, startCli, waitForOutput } from '../helpers/cli.js';
import { savedNodeState, startSimCli, stopSimCli } from '../helpers/sim-cli.js';
import { until } from '../helpers/until.js';
import type { FailureJson } from '../../cli/failure-block.js';
import { SECRETS, secretNeedles } from '../engine/secrets.js';

let sim: Sim | null = null;
let dir = '';
let env: NodeJS.ProcessEnv = {};
const stateDir = () => path.join(dir, 'state');

const nodeState = (node: string) => savedNodeState(dir, node);

/** The node's deploys as history lists them (newest first): no worker of its own, unlike watch. */
async function historyOf(node: string): Promise<{ action: string; profile: string; result: string }[]> {
  const h = await runCli(['model', 'history', '--node', node, '--json'], env);
  return h.code === 0 ? (JSON.parse(h.stdout) as { action: string; profile: string; result: string }[]) : [];
}

async function endpoint(node: string): Promise<{ enabled: boolean } | undefined> {
  const f = JSON.parse(await readFile(path.join(stateDir(), 'gateway-backends.json'), 'utf8')) as { models: { endpoints: { name: string; enabled: boolean }[] }[] };
  return f.models[0]?.endpoints.find((e) => e.name === node);
}

before(async () => ({ sim, dir, env } = await startSimCli('pulse-deploy-', { nodes: ['simA', 'simB', 'simC'], readyDelayMs: 300 })));

after(() => stopSimCli(sim, dir));

test('up best reaches a verified server with one line per step, the background worker, state and the gateway file', async () => {
  const r = await runCli(['model', 'up', 'best', '--node', 'simA'], env);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /^Started a background pulse worker \(pid \d+, log .*logs\/worker\.log\) to run this deploy; it goes on if this terminal closes and exits after 300 s idle\.$/m);
  for (const step of ['1/9 preflight', '3/9 stop', '4/9 memory wait', '5/9 write .env', '6/9 start', '7/9 readiness', '8/9 verify', '9/9 publish state']) {
    assert.match(r.stdout, new RegExp(`✓ ${step} on simA \\((\\d+\\.\\d|\\d+)s\\)`), step);
  }
  assert.match(r.stdout, /up best on simA: ok, node up/);
  assert.equal((await nodeState('simA')).state, 'up');
  assert.equal((await endpoint('simA'))?.enabled, true);
  assert.equal(sim!.node('simA').startShCalls().length, 1);
});

test('up again with the same identity runs only steps 1, 7, 8, 9', async () => {
  const r = await runCli(['model', 'up', 'best', '--node', 'simA'], env);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.deepEqual([...r.stdout.matchAll(/→ (\d)\/9 /g)].map((m) => m[1]), ['1', '7', '8', '9'], r.stdout);
  assert.equal(sim!.node('simA').startShCalls().length, 1, 'no second start.sh');
});

test('down stops the server and the node state says down', async () => {
  const r = await runCli(['model', 'down', '--node', 'simA'], env);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /down on simA: ok, node down/);
  assert.equal((await nodeState('simA')).state, 'down');
  assert.equal(sim!.node('simA').containers().filter((c) => c.State.Running).length, 0);
});

test('a never-ready node ends failed, endpoint disabled, with the backup path and the rollback command on screen (and in watch --json)', async () => {
  // Secret lines on the node (carried by every up): neither the text block nor its --json may show their values.
  const n = sim!.node('simB');
  const sample = await readFile(path.join(n.recipeDir, '.env.sample'), 'utf8');
  await writeFile(n.envPath, `${sample}\nAPI_KEY=${SECRETS.API_KEY}\nHF_TOKEN=${SECRETS.HF_TOKEN}\n`, { mode: 0o600 });
  const first = await runCli(['model', 'up', 'datagen', '--node', 'simB'], env);
  assert.equal(first.code, 0, first.stdout + first.stderr);
  sim!.node('simB').setFailure('never-ready');
  const r = await runCli(['model', 'up', 'best', '--node', 'simB', '--timeout-s', '3'], env);
  assert.notEqual(r.code, 0);
  assert.match(r.stdout, /✗ 7\/9 readiness on simB/);
  assert.match(r.stdout, /up best on simB: FAILED at readiness \(cause above\), node failed/);
  const state = await nodeState('simB');
  assert.equal(state.state, 'failed');
  assert.ok(state.backupPath, 'a backup was written');
  assert.ok(r.stdout.includes(`backup of the previous .env: ${state.backupPath}`), r.stdout);
  assert.ok(r.stdout.includes(`to go back: pulse model rollback --node simB --to ${state.backupPath}`), r.stdout);
  // The way out, read from the node after the close: the container now (state, memory), the start log, the last
  // lines of the container's log, then the backup and the rollback command.
  const block = r.stdout.slice(r.stdout.indexOf('✗ 7/9 readiness on simB'));
  const container = /^ {2}container vllm-qwen38: (still running, MemAvailable \d+\.\d of \d+\.\d GiB; it holds its memory until it stops: pulse model down --node simB|\w+.*MemAvailable \d+\.\d of \d+\.\d GiB)$/m;
  assert.match(block, container, block);
  assert.match(block, /^ {2}start log: \S+\/logs\/pulse-up-\d{8}T\d{6}Z\.log {2}\(pulse model logs --node simB --deploy\)$/m, block);
  assert.match(block, /^ {2}last \d+ line\(s\) of the container log \(more: pulse model logs --node simB --tail 200\):\n( {4}\| .*\n)+/m, block);
  const order = [container.exec(block)?.index ?? -1, block.indexOf('  start log:'), block.indexOf('  backup of'), block.indexOf('  to go back')];
  assert.deepEqual([...order].sort((a, b) => a - b), order, `container, logs, backup, rollback in that order:\n${block}`);
  assert.equal((await endpoint('simB'))?.enabled, false);
  // The SDK's "[WARN] Activity failed { sdkComponent: 'worker', ... stack }" lines go to the worker log, not here.
  assert.doesNotMatch(r.stdout + r.stderr, /\[WARN\]|sdkComponent|^\s+at .+:\d+:\d+\)?$/m, r.stdout + r.stderr);
  assert.match(r.stdout, /worker log: .*logs\/worker\.log/);

  // The same block as fields: watch --json of the closed deploy (up --json prints it through the same code).
  const w = await runCli(['model', 'watch', '--node', 'simB', '--json'], env);
  assert.notEqual(w.code, 0, w.stdout + w.stderr);
  assert.ok(w.stdout.trimStart().startsWith('{'), `only the JSON on stdout:\n${w.stdout}\n${w.stderr}`);
  const j = JSON.parse(w.stdout) as { ok: boolean; failure?: FailureJson };
  const f = j.failure;
  assert.ok(f, w.stdout);
  assert.equal(f.step, 'readiness');
  assert.equal(f.errorType, 'Timeout');
  assert.ok(f.message.length > 0 && !f.message.startsWith('readiness:'), f.message);
  // The cause once (issue 30 item 3): on the ✗ line, which the closing line points to.
  assert.ok(r.stdout.includes(`✗ 7/9 readiness on simB`) && r.stdout.includes(`: failed: ${f.message}`), `the message the text printed:\n${r.stdout}\n${f.message}`);
  assert.match(block, /\ncause: readiness: .*\nup best on simB: FAILED at readiness \(cause above\), node failed\n/, block);
  assert.deepEqual(f.compensated, { nodeMarkedFailed: true, endpointDisabled: true });
  assert.equal(f.backupPath, state.backupPath);
  assert.equal(f.rollbackCommand, `pulse model rollback --node simB --to ${state.backupPath}`);
  assert.ok(f.node?.answered, w.stdout);
  assert.equal(f.node.container?.name, 'vllm-qwen38');
  assert.match(f.node.startLog ?? '', /\/logs\/pulse-up-\d{8}T\d{6}Z\.log$/);
  assert.ok(f.node.logLines.length > 0 && f.node.memTotalGiB !== null, w.stdout);
  for (const secret of secretNeedles()) assert.ok(!(r.stdout + r.stderr + w.stdout + w.stderr).includes(secret), 'no secret value in the output');
  sim!.node('simB').setFailure('none');
});

test('Ctrl-C, then the terminal closes (SIGHUP to its process group): the deploy still completes, start.sh ran once', async () => {
  await stopBackgroundWorker(stateDir()); // this CLI must start the worker it leaves behind
  const node = sim!.node('simC');
  node.setReadyDelay(4000);
  const up = startCli(['model', 'up', 'best', '--node', 'simC'], env, { group: true });
  await waitForOutput(up, /→ 7\/9 readiness on simC/);
  assert.match(up.output(), /Started a background pulse worker \(pid \d+/);
  const pgid = up.child.pid!;
  const worker = backgroundWorkerPid(stateDir());
  assert.ok(worker !== null);
  // Its own session and process group (setsid), so neither the terminal's Ctrl-C nor its hangup reaches it.
  const [, , , pgrp, session] = (await readFile(`/proc/${worker}/stat`, 'utf8')).replace(/^.*\) /, ') ').split(' ');
  assert.equal(Number(pgrp), worker);
  assert.equal(Number(session), worker);
  process.kill(-pgid, 'SIGINT'); // the terminal's Ctrl-C goes to its foreground process group
  const d = await up.done;
  // The terminal closes: its hangup reaches whatever is left of the job's process group (nothing, when all is well).
  try {
    process.kill(-pgid, 'SIGHUP');
  } catch {
    // ESRCH: the group is empty
  }
  assert.equal(d.code, 130, `${d.code} ${d.signal} ${d.stdout}${d.stderr}`);
  assert.match(d.stdout, /detached: the deploy goes on in the background pulse worker \(pid \d+\); closing this terminal does not stop it\./);
  assert.match(d.stdout, /follow it: pulse model watch --node simC\ncancel it: pulse model cancel --node simC/);
  assert.match(d.stdout, /roll back: nothing earlier is saved for simC/);
  // No pulse command that provides a worker runs from here on: the background worker alone finishes the deploy.
  await until('the deploy on simC to succeed', async () => (await historyOf('simC'))[0]?.result === 'ok (up)', 120_000, { everyMs: 1000 });
  assert.deepEqual((await historyOf('simC')).map((x) => [x.action, x.profile, x.result]), [['up', 'best', 'ok (up)']]);
  assert.equal(node.startShCalls().length, 1, 'start.sh ran once');
  node.setReadyDelay(300);
});

test('up --detach with no worker running: a background worker runs the deploy to its end, then exits when idle', async () => {
  await stopBackgroundWorker(stateDir());
  const starts = sim!.node('simB').startShCalls().length;
  // --restart: the never-ready container of the failed deploy before still runs this very .env.
  const r = await runCli(['model', 'up', 'best', '--node', 'simB', '--restart', '--detach'], { ...env, PULSE_WORKER_IDLE_S: '2' });
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /started up best on simB: workflow pulse-model-simB/);
  assert.match(r.stdout, /a background pulse worker \(pid (\d+)\) runs it beside the embedded server; it exits after 2 s with no deploy/);
  assert.match(r.stdout, /follow it: pulse model watch --node simB\ncancel it: pulse model cancel --node simB .*\nroll back: pulse model rollback --node simB {3}\(once it has ended: the \.env it replaced, byte for byte/);
  const pid = Number(/pid (\d+)\)/.exec(r.stdout)?.[1]);
  await until('the detached deploy on simB to succeed', async () => (await historyOf('simB'))[0]?.result === 'ok (up)', 120_000, { everyMs: 1000 });
  assert.equal(sim!.node('simB').startShCalls().length, starts + 1, 'start.sh ran once');
  await until(`the idle background worker (pid ${pid}) to exit`, () => !pidAlive(pid), 60_000, { everyMs: 250 });
  assert.equal(backgroundWorkerPid(stateDir()), null, 'it removed its worker.json');
});

test('with `pulse worker` running, up --detach returns at once, watch follows without its own worker; SIGTERM stops the worker', async () => {
  const worker = startCli(['worker'], env);
  try {
    await waitForOutput(worker, /polling task queue pulse-deploy/);
    const up = await runCli(['model', 'up', 'datagen', '--node', 'simA', '--detach'], env);
    assert.equal(up.code, 0, up.stdout + up.stderr);
    assert.match(up.stdout, /started up datagen on simA: workflow pulse-model-simA/);
    assert.doesNotMatch(up.stdout, /no pulse worker polls/);
    // watch follows it, or (when it already ended) replays its steps and result: either way no worker of its own.
    const w = await runCli(['model', 'watch', '--node', 'simA'], env);
    assert.equal(w.code, 0, w.stdout + w.stderr);
    assert.match(w.stdout, /✓ 9\/9 publish state on simA/);
    assert.match(w.stdout, /up datagen on simA: ok, node up/);
    assert.doesNotMatch(w.stdout, /running one in this process/);
    const h = await runCli(['model', 'history', '--node', 'simA', '--limit', '1', '--json'], env);
    assert.deepEqual((JSON.parse(h.stdout) as { profile: string; result: string }[]).map((x) => [x.profile, x.result]), [['datagen', 'ok (up)']]);
  } finally {
    worker.child.kill('SIGTERM');
  }
  const end = await worker.done;
  assert.equal(end.code, 0, end.stderr);
});

test('cancel during the readiness wait compensates: node failed, endpoint disabled, the follower exits non-zero', async () => {
  sim!.node('simB').setReadyDelay(60_000);
  const up = startCli(['model', 'up', 'datagen', '--node', 'simB'], env);
  await waitForOutput(up, /→ 7\/9 readiness on simB/);
  const c = await runCli(['model', 'cancel', '--node', 'simB'], env);
  assert.equal(c.code, 0, c.stdout + c.stderr);
  const r = await up.done;
  assert.notEqual(r.code, 0);
  assert.match(r.stdout, /up datagen on simB: CANCELLED, node failed: readiness: deploy cancelled/);
  assert.equal((await nodeState('simB')).state, 'failed');
  assert.equal((await endpoint('simB'))?.enabled, false);
  sim!.node('simB').setReadyDelay(300);
});

test('a CLI killed mid-deploy (SIGKILL) leaves the deploy running in the background worker: watch follows it to its end, start.sh ran once', async () => {
  const node = sim!.node('simC');
  node.setReadyDelay(3000);
  const startsBefore = node.startShCalls().length;
  const up = startCli(['model', 'up', 'datagen', '--node', 'simC'], env);
  await waitForOutput(up, /→ 7\/9 readiness on simC/);
  up.child.kill('SIGKILL');
  await up.done;
  const w = await runCli(['model', 'watch', '--node', 'simC'], env);
  assert.equal(w.code, 0, w.stdout + w.stderr);
  assert.doesNotMatch(w.stdout, /running one in this process|started a background/, 'the worker the killed CLI started runs it');
  assert.match(w.stdout, /up datagen on simC: ok, node up/);
  assert.equal(node.startShCalls().length, startsBefore + 1, 'exactly one start.sh run for the deploy');
  node.setReadyDelay(300);
});

test('the background worker goes with its server: by itself when the server dies, and stopped by stopEmbeddedServer', async () => {
  const r = await runCli(['model', 'up', 'best', '--node', 'simA'], env); // a background worker runs (started or reused)
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const pid = backgroundWorkerPid(stateDir());
  assert.ok(pid !== null && pidAlive(pid), 'a background worker runs');
  const server = JSON.parse(await readFile(path.join(stateDir(), 'temporal', 'server.json'), 'utf8')) as { pid: number };
  process.kill(server.pid, 'SIGKILL'); // a crash, or scripts/demo.sh's cleanup: nobody stops the worker
  await until(`the background worker (pid ${pid}) to exit after its server`, () => !pidAlive(pid), 60_000, { everyMs: 250 });
  const again = await runCli(['model', 'down', '--node', 'simA'], env); // a new server, a new worker
  assert.equal(again.code, 0, again.stdout + again.stderr);
  const next = backgroundWorkerPid(stateDir());
  assert.ok(next !== null && next !== pid && pidAlive(next), again.stdout);
  await stopEmbeddedServer(stateDir()); // what every test's teardown calls
  assert.equal(pidAlive(next), false, 'no worker process left after the teardown');
});
