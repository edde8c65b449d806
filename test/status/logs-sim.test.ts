/**
 * `pulse model logs` through the CLI against a simulated node over real sshd: --tail N gives the last N lines of
 * the container's log with the node .env's API_KEY value redacted on the node; --deploy reads the deploy's start
 * log (the one the node state names, else the newest logs/pulse-up-*.log); -f prints new lines as they come and
 * ends with exit 0 on SIGINT, leaving no `docker logs -f` behind on the node, or by itself when the container stops.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { PROFILE_IMAGE } from '../sim/index.js';
import type { SimNode } from '../sim/index.js';
import { startCli, waitForOutput } from '../helpers/cli.js';
import { until } from '../helpers/until.js';
import { SECRET_KEY, runSimCli, saveState, startStatusSim, writePulseEnv } from './sim-helpers.js';
import type { StatusSim } from './sim-helpers.js';

let s: StatusSim;
let n: SimNode;
const outputs: string[] = [];

async function logs(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const r = await runSimCli(s, ['model', 'logs', '--node', 'spark2', ...args]);
  outputs.push(r.stdout, r.stderr);
  return r;
}

function follow(...args: string[]): ReturnType<typeof startCli> {
  const env = { ...s.sim.env(), PULSE_STATE_DIR: s.stateDir, TEMPORAL_ADDRESS: undefined };
  return startCli(['--nodes', s.nodesFile, 'model', 'logs', '--node', 'spark2', '-f', ...args], env);
}

/** A container under the recipe's name running `script` in bash, with the secret in its environment as K. */
function container(script: string): void {
  n.exec(`docker rm -f ${n.containerName} >/dev/null 2>&1 || true`);
  n.docker('run', '-d', '--name', n.containerName, '-e', `K=${SECRET_KEY}`, PROFILE_IMAGE, 'bash', '-c', script);
}

/** How many `docker logs` processes of this node run on the machine (its real docker client, under its docker dir). */
function dockerLogsProcesses(): number {
  const ps = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' });
  const client = `${n.paths.dockerDir}/cli/docker logs`;
  return ps.split('\n').filter((l) => l.startsWith(client)).length;
}

describe('pulse model logs on a simulated node', () => {
  before(async () => {
    s = await startStatusSim(2);
    n = s.sim.node('spark2');
    writePulseEnv(n); // the recipe .env carries API_KEY=SECRET_KEY: the node's redaction knows it from there
  });
  after(async () => {
    for (const o of outputs) assert.ok(!o.includes(SECRET_KEY), 'the API key never reaches any output');
    await s?.stop();
  });

  test('--tail 3: the last three lines, the API_KEY value redacted on the node', async () => {
    container('for i in $(seq 1 30); do echo "line $i"; done; echo "auth with $K"; sleep 300');
    await until('the container logged its key', () => n.exec(`docker logs ${n.containerName} 2>&1`).includes('auth with'), 10_000);
    const r = await logs('--tail', '3');
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.stdout.split('\n'), ['line 29', 'line 30', 'auth with <redacted:API_KEY>', '']);
    assert.match(r.stderr, /^pulse: container vllm-qwen38 \(running\) on spark2, recipe qwen38-flash\n$/);
    const all = await logs('--tail', 'all', '--quiet');
    assert.equal(all.stdout.split('\n').length, 32, 'every line');
    assert.equal(all.stderr, '');
  });

  test('--deploy: the start log the node state names, else the newest logs/pulse-up-*.log', async () => {
    const dir = path.join(n.recipeDir, 'logs');
    writeFileSync(path.join(dir, 'pulse-up-20261201T100000Z.log'), 'old start\n');
    const newest = path.join(dir, 'pulse-up-20261202T100000Z.log');
    writeFileSync(newest, `start.sh: launching\nstart.sh: key ${SECRET_KEY}\nstart.sh: ready\n`);
    const r = await logs('--deploy', '--tail', '2');
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.stdout.split('\n'), ['start.sh: key <redacted:API_KEY>', 'start.sh: ready', '']);
    assert.match(r.stderr, new RegExp(`deploy start log ${newest.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} on spark2`));
    await saveState(s.stateDir, 'spark2', { logPath: path.join(dir, 'pulse-up-20261201T100000Z.log') });
    const named = await logs('--deploy');
    assert.equal(named.stdout, 'old start\n');
  });

  test('-f prints new lines as they come; SIGINT ends it with exit 0 and no docker logs left on the node', async () => {
    container('i=0; while :; do i=$((i+1)); echo "tick $i"; sleep 0.2; done');
    const run = follow('--tail', '1');
    await waitForOutput(run, /following, Ctrl-C to stop/);
    const first = Number(/tick (\d+)/.exec(await waitForOutput(run, /tick \d+/))?.[1]);
    await waitForOutput(run, new RegExp(`tick ${first + 3}\\b`), 20_000);
    run.child.kill('SIGINT');
    const d = await run.done;
    outputs.push(d.stdout, d.stderr);
    assert.equal(d.code, 0, d.stderr);
    const ticks = [...d.stdout.matchAll(/^tick (\d+)$/gm)].map((m) => Number(m[1]));
    assert.deepEqual(ticks, ticks.map((_, i) => first + i), 'consecutive lines, none lost or repeated');
    await until('no docker logs -f left on the node', () => dockerLogsProcesses() === 0, 10_000);
  });

  test('a line that carriage returns rewrote (a tqdm bar) shows as a terminal would: its last state, not every update', async () => {
    container('printf "Loading safetensors:   0%%|          | 0/4\\rLoading safetensors:  50%%|#####     | 2/4\\rLoading safetensors: 100%%|##########| 4/4\\n"; echo done; sleep 300');
    await until('the container logged', () => n.exec(`docker logs ${n.containerName} 2>&1`).includes('done'), 10_000);
    const r = await logs('--tail', '2');
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.stdout.split('\n'), ['Loading safetensors: 100%|##########| 4/4', 'done', '']);
  });

  test('--timestamps puts docker\'s time before each line; --since leaves out what came before; both refused with --deploy', async () => {
    container('echo early; sleep 300');
    await until('the container logged', () => n.exec(`docker logs ${n.containerName} 2>&1`).includes('early'), 10_000);
    const t = await logs('--tail', '1', '--timestamps');
    assert.equal(t.code, 0, t.stderr);
    assert.match(t.stdout, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z early\n$/);
    const later = await logs('--since', '2099-01-01T00:00:00Z');
    assert.equal(later.code, 0, later.stderr);
    assert.equal(later.stdout, '', 'nothing was logged after 2099');
    const recent = await logs('--since', '1h');
    assert.equal(recent.code, 0, recent.stderr);
    assert.equal(recent.stdout, 'early\n');
    const both = await logs('--deploy', '--since', '10m');
    assert.equal(both.code, 2, both.stderr);
    assert.match(both.stderr, /^pulse: --since and --timestamps read the container's log/);
    const bad = await logs('--since', 'yesterday');
    assert.equal(bad.code, 2, bad.stderr);
  });

  test('-f says why it ended when the container is removed under it (a down, or a deploy\'s stop)', async () => {
    container('while :; do echo old; sleep 0.5; done');
    const run = follow('--tail', '0');
    await waitForOutput(run, /following, Ctrl-C to stop/);
    n.exec(`docker rm -f ${n.containerName} >/dev/null`);
    const d = await run.done;
    outputs.push(d.stdout, d.stderr);
    assert.equal(d.code, 0, d.stderr);
    assert.match(d.stderr, /container vllm-qwen38 was removed \(a down, or a deploy's stop: a deploy starts a new one later\); its log ended/);
    container('while :; do echo tick; sleep 0.5; done'); // the next test follows a running one
  });

  test('-f ends by itself when the container stops; a node without the container is a precondition failure (5)', async () => {
    const run = follow('--tail', '0');
    await waitForOutput(run, /following, Ctrl-C to stop/);
    n.docker('stop', '-t', '1', n.containerName);
    const d = await run.done;
    outputs.push(d.stdout, d.stderr);
    assert.equal(d.code, 0, d.stderr);
    assert.match(d.stderr, /container vllm-qwen38 stopped \(exited, exit code \d+\); its log ended\. Why: pulse model status --node spark2/);
    n.exec(`docker rm -f ${n.containerName} >/dev/null 2>&1 || true`);
    const none = await logs();
    assert.equal(none.code, 5, none.stderr);
    assert.match(none.stderr, /^pulse: .*container vllm-qwen38 does not exist on the node/m);
    const unknown = await runSimCli(s, ['model', 'logs', '--node', 'spark9']);
    assert.equal(unknown.code, 3, unknown.stderr);
  });
});
