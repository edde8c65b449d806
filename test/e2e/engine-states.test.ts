/**
 * What the real Docker engine shows (issue 28 items 1-6), through the CLI on a simulated node whose docker is a real
 * dockerd: an up whose container cannot start (the NVIDIA hook fails as with a broken driver) ends at the first
 * readiness probe and names State.Error, and status shows it without docker's zero time; the GPU probe shows the
 * error line, not the 28.x CLI's closing advice; an exited container shows its FinishedAt; a daemon that does not
 * answer is named as such by status, logs, up's preflight and the watchdog's check, never "no such container" or
 * "image not on the node"; status reads a bounded tail of the container log; a crash loop found by readiness is
 * ended, the container kept with its log. Each of these failed on the code before issue 28.
 */
import assert from 'node:assert/strict';
import { appendFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { loadNodesConfig } from '../../runtime/config/nodes.js';
import { openSession } from '../../runtime/node/connect.js';
import { statusOfNode } from '../../runtime/status/collect.js';
import { checkOf, healDecision, judge, nextRecord, watchdogStatusRequest } from '../../runtime/fleet/watchdog.js';
import { readNodeStateSync } from '../../runtime/state/state.js';
import type { StatusReport } from '../../runtime/status/types.js';
import type { Sim } from '../sim/index.js';
import { runCli } from '../helpers/cli.js';
import { startSimCli, stopSimCli } from '../helpers/sim-cli.js';

let sim: Sim | null = null;
let dir = '';
let env: NodeJS.ProcessEnv = {};
const NODE = 'simA';
const CONTAINER = 'vllm-qwen38';

before(async () => ({ sim, dir, env } = await startSimCli('pulse-engine-states-', { nodes: [NODE], readyDelayMs: 300 })));
after(() => stopSimCli(sim, dir));

const node = () => sim!.node(NODE);
const inspect = (format: string): string => node().docker('container', 'inspect', '--format', format, CONTAINER).trim();

async function statusJson(): Promise<StatusReport> {
  const r = await runCli(['model', 'status', '--json', '--node', NODE], env);
  return JSON.parse(r.stdout) as StatusReport;
}

async function upOk(): Promise<void> {
  const r = await runCli(['model', 'up', 'best', '--node', NODE], env);
  assert.equal(r.code, 0, r.stdout + r.stderr);
}

test('a container that cannot start (the GPU hook fails): up ends at once naming State.Error; status and the failure block show it', async () => {
  node().setControl({ gpuDriverBroken: true });
  try {
    const t0 = Date.now();
    const r = await runCli(['model', 'up', 'best', '--node', NODE, '--timeout-s', '600'], env);
    const took = (Date.now() - t0) / 1000;
    const out = r.stdout + r.stderr;
    assert.equal(r.code, 5, out);
    assert.ok(took < 120, `up failed after ${took} s, not at the first probe (budget 600 s)`);
    const waited = Number(/readiness on simA \((\d+(?:\.\d+)?)s\)/.exec(out)?.[1] ?? NaN);
    assert.ok(waited < 15, `the readiness step took ${waited} s: it must end at its first probes, not wait its budget`);
    assert.match(out, /container vllm-qwen38 could not start \(docker left it created, never started, exit code 12\d\): State\.Error: .*nvml error: driver not loaded/);
    assert.match(out, /container vllm-qwen38: created, never started: docker could not start it: .*nvml error: driver not loaded/);
    assert.equal(inspect('{{.State.Status}} {{.State.StartedAt}}'), 'created 0001-01-01T00:00:00Z');

    const text = await runCli(['model', 'status', '--node', NODE], env);
    assert.doesNotMatch(text.stdout, /0001-01-01|\d{5,}d/);
    assert.match(text.stdout.replace(/\n {13}/g, ' '), /container +vllm-qwen38 created, never started, image \S+; error: .*nvml error: driver not loaded/);
    const c = (await statusJson()).nodes[0]?.container;
    assert.equal(c?.state, 'created');
    assert.equal(c?.startedAt, null);
    assert.match(c?.error ?? '', /nvidia-container-cli: initialization error: nvml error: driver not loaded/);

    // The GPU probe (`docker run --rm --gpus all ...`): the error line, not "Run 'docker run --help' for more information".
    const probe = await runCli(['model', 'status', '--node', NODE, '--gpu-probe', '--no-http'], env);
    const line = probe.stdout.replace(/\n {13}/g, ' ').split('\n').find((l) => l.includes('gpu probe')) ?? '';
    assert.match(line, /gpu probe +exit 125: docker: Error response from daemon: .*nvml error/, probe.stdout);
    assert.doesNotMatch(line, /for more information/);
  } finally {
    node().setControl({ gpuDriverBroken: false });
    await runCli(['model', 'down', '--node', NODE], env);
  }
});

test('an exited container shows since its FinishedAt, not its StartedAt', async () => {
  await upOk();
  await new Promise((r) => setTimeout(r, 1200)); // FinishedAt a second or more past StartedAt
  node().docker('kill', CONTAINER);
  const [started, finished] = inspect('{{.State.StartedAt}} {{.State.FinishedAt}}').split(' ').map((t) => new Date(Date.parse(t ?? '')).toISOString().replace(/\.\d{3}Z$/, 'Z'));
  assert.notEqual(started, finished);
  const text = await runCli(['model', 'status', '--node', NODE, '--no-http'], env);
  assert.match(text.stdout, new RegExp(`container +vllm-qwen38 exited since ${finished} \\(`));
  await runCli(['model', 'down', '--node', NODE], env);
});

test('a Docker daemon that does not answer: status, logs, up and the watchdog check name it, never "no such container"', async () => {
  await upOk();
  await node().stopDaemon();
  try {
    const text = await runCli(['model', 'status', '--node', NODE], env);
    assert.doesNotMatch(text.stdout, /no such container/);
    assert.match(text.stdout.replace(/\n {13}/g, ' '), /container +vllm-qwen38: unknown \(the Docker daemon does not answer: Cannot connect to the Docker daemon/);
    const j = (await statusJson()).nodes[0];
    assert.equal(j?.container?.state, 'unknown');
    assert.match(j?.dockerDown ?? '', /Cannot connect to the Docker daemon/);

    const logs = await runCli(['model', 'logs', '--node', NODE], env);
    assert.equal(logs.code, 14, logs.stdout + logs.stderr);
    assert.match(logs.stderr, /the Docker daemon does not answer/);
    assert.doesNotMatch(logs.stderr, /does not exist on the node/);

    const up = await runCli(['model', 'up', 'best', '--node', NODE, '--restart'], env);
    assert.equal(up.code, 14, up.stdout + up.stderr);
    assert.match(up.stdout + up.stderr, /preflight: .*the Docker daemon does not answer: Cannot connect/);
    assert.doesNotMatch(up.stdout + up.stderr, /is not on the node/);

    // The watchdog's check, as watchdogProbe runs it (status.sh over ssh), and its verdict: down, named, no heal.
    process.env.PULSE_SSH_CONFIG = sim!.sshConfigPath;
    const config = loadNodesConfig(String(env.PULSE_NODES));
    const st = await statusOfNode(config, NODE, watchdogStatusRequest({ node: NODE, confirmed: false }), { open: openSession, stateDir: String(env.PULSE_STATE_DIR) });
    const check = checkOf(st);
    const verdict = judge(check, readNodeStateSync(String(env.PULSE_STATE_DIR), NODE));
    assert.equal(verdict.verdict, 'down');
    assert.match(verdict.reason ?? '', /^the Docker daemon does not answer: Cannot connect/);
    const req = { action: 'watchdog', version: 1, node: NODE, everyS: 60, after: 1, heal: true, healsPerHour: 2, confirmed: false } as const;
    const rec = nextRecord(null, verdict, check, req, new Date().toISOString());
    assert.deepEqual(healDecision(rec, req, false, rec.at, verdict.noHeal).heal, false);
  } finally {
    await node().startDaemon();
  }
  await runCli(['model', 'down', '--node', NODE], env);
});

/** The bound of every docker call on a node (runtime/scripts/prelude.sh PULSE_DOCKER_BOUND_S). */
const DOCKER_BOUND_S = 10;

test('a frozen Docker daemon (SIGSTOP): down with a drain fails within its budget plus the docker bound, as docker-down, and frees the node', async () => {
  await upOk();
  const stops = node().stopShCalls().length;
  node().freezeDaemon(true, 300_000); // thawed below; the timer only guards a test that dies on the way
  try {
    const t0 = Date.now();
    const r = await runCli(['model', 'down', '--node', NODE, '--drain-s', '5'], env);
    const took = (Date.now() - t0) / 1000;
    const out = r.stdout + r.stderr;
    assert.equal(r.code, 14, out); // docker-down
    assert.match(out, new RegExp(`the Docker daemon did not answer within ${DOCKER_BOUND_S} s \\(docker container inspect`));
    assert.doesNotMatch(out, /attempt 2/, 'a silent daemon is not asked again by a retry of the step');
    // The drain step ends within its budget (5 s) plus the bound; before, it showed `not probed yet, 123s of 5s` and
    // failed after 5 min 05 s. The whole command also waits for the failure block's status (one more bound).
    const drainS = Number(/✗ 1\/2 drain on simA \((\d+(?:\.\d+)?)s\)/.exec(out)?.[1] ?? NaN);
    assert.ok(drainS <= 5 + DOCKER_BOUND_S + 3, `the drain step took ${drainS} s\n${out}`);
    assert.ok(took < 5 + 2 * DOCKER_BOUND_S + 30, `down took ${took} s`);
    assert.equal(node().stopShCalls().length, stops, 'nothing was stopped');
    // The node's lock was released: the next command is not refused by it (exit 4) but meets the daemon (exit 14),
    // this time at the stop (--no-drain), again within the bound.
    const again = await runCli(['model', 'down', '--node', NODE, '--no-drain'], env);
    const out2 = again.stdout + again.stderr;
    assert.equal(again.code, 14, out2);
    assert.match(out2, /stop: .*the Docker daemon did not answer within 10 s \(docker container inspect/);
    const stopS = Number(/✗ 1\/2 stop on simA \((\d+(?:\.\d+)?)s\)/.exec(out2)?.[1] ?? NaN);
    assert.ok(stopS <= DOCKER_BOUND_S + 3, `the stop step took ${stopS} s\n${out2}`);
  } finally {
    node().freezeDaemon(false);
  }
  const down = await runCli(['model', 'down', '--node', NODE], env);
  assert.equal(down.code, 0, down.stdout + down.stderr);
});

test('status reads a bounded tail of the container log: a KV cache line 3000 lines back is not read, the saved one is shown', async () => {
  await upOk();
  const before = await statusJson();
  assert.equal(before.nodes[0]?.kvCache.source, 'log');
  // 3000 more lines in docker's own json-file format, appended to the file the daemon writes.
  const logPath = inspect('{{.LogPath}}');
  const line = (i: number): string => `${JSON.stringify({ log: `INFO request ${i} done\n`, stream: 'stdout', time: new Date().toISOString() })}\n`;
  appendFileSync(logPath, Array.from({ length: 3000 }, (_, i) => line(i)).join(''));
  const after = (await statusJson()).nodes[0];
  assert.equal(after?.kvCache.source, 'state', 'the line up saved, not one read from the whole log');
  assert.match(after?.kvCache.line ?? '', /GPU KV cache size/);
  await runCli(['model', 'down', '--node', NODE], env);
});

test('a crash loop found by readiness is ended: the container stays, exited, its restart policy off, its log kept', async () => {
  node().setRestartPolicy('on-failure');
  node().setFailure('crash-at-start');
  try {
    const r = await runCli(['model', 'up', 'best', '--node', NODE, '--timeout-s', '600'], env);
    const out = r.stdout + r.stderr;
    assert.equal(r.code, 7, out); // not ready, for good: the server died before it served (runtime/steps/checks.ts)
    assert.match(out, /restarted during the readiness wait .*pulse ended the loop \(docker update --restart=no, docker stop\)/);
    assert.equal(inspect('{{.HostConfig.RestartPolicy.Name}}'), 'no');
    const count = inspect('{{.State.Status}} {{.RestartCount}}');
    assert.match(count, /^exited \d+$/);
    await new Promise((r2) => setTimeout(r2, 3000));
    assert.equal(inspect('{{.State.Status}} {{.RestartCount}}'), count, 'no restart after the loop was ended');
    assert.match(node().docker('logs', '--tail', '50', CONTAINER), /failed to start/);
  } finally {
    node().setFailure('none');
    node().setRestartPolicy(null);
    await runCli(['model', 'down', '--node', NODE], env);
  }
});
