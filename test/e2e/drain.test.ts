/**
 * The drain before a stop (issue 29) through `node bin/pulse-cli` on the simulator: the requests a server has in
 * flight finish before an up's restart stops it (0 cut); a short --drain-s budget stops anyway and says how many it
 * cut (the sim counts them too); down and each node of a rollout drain; a worker SIGKILLed during the drain still ends
 * with one stop, one start.sh and 0 cut; a server without /metrics is said so, with the connections counted instead;
 * a protected node's API key never appears in any output. What the stop cut is counted right before its signal (a
 * request that began after the drain's last sample included: its line is `!`, not ✓, and history keeps the count); a
 * /metrics that lies (a negative or NaN gauge, another model's) is not idle.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Sim } from '../sim/index.js';
import { clearInflight, inflightCounts, inflightRecords } from '../sim/vllm-metrics.js';
import type { MetricsLie } from '../sim/control.js';
import { backgroundWorkerPid, runCli, startCli, waitForOutput } from '../helpers/cli.js';
import { startSimCli, stopSimCli } from '../helpers/sim-cli.js';
import { streamChat, type StreamOutcome } from '../helpers/stream-client.js';
import { until } from '../helpers/until.js';
import { SECRETS, secretNeedles } from '../engine/secrets.js';
import type { DeployResult } from '../../runtime/model/index.js';

let sim: Sim | null = null;
let dir = '';
let env: NodeJS.ProcessEnv = {};
const stateDir = () => path.join(dir, 'state');

before(async () => {
  ({ sim, dir, env } = await startSimCli('pulse-drain-', { nodes: ['simA', 'simB', 'simC'], readyDelayMs: 300 }));
  // simC is protected (as spark1 is) and its .env holds an API key: its server wants the key on /v1.
  sim.writeNodesJson(env['PULSE_NODES'] as string, { protected: ['simC'] });
});

after(() => stopSimCli(sim, dir));

/**
 * `n` streamed completions on the node's server, held before their last chunk (the node's holdGeneration) until
 * release(node); resolves once all of them are in flight, with their outcomes still to come (wrapped: an async
 * function that returned the promise itself would wait for it).
 */
async function inFlight(node: string, n: number, key?: string): Promise<{ done: Promise<StreamOutcome[]> }> {
  const s = sim!.node(node);
  s.setControl({ generationMs: 200, holdGeneration: true });
  clearInflight(s.paths.state);
  const clients = Promise.all(Array.from({ length: n }, () => streamChat(s.vllmPort, key ? { key } : {})));
  await until(`${n} requests in flight on ${node}`, () => inflightRecords(s.paths.state).filter((r) => r.event === 'begin').length >= n, 30_000);
  return { done: clients };
}

/** How many times the node's server answered GET /metrics (since the request log began). */
const metricsReads = (node: string): number => sim!.node(node).requests().filter((r) => r.path === '/metrics').length;

/** The held completions may end. */
const release = (node: string): unknown => sim!.node(node).setControl({ holdGeneration: false });

/** Runs the CLI; once its output shows the drain waiting (`… draining: …`), `then` runs (a release, a kill). */
async function whileDraining(args: string[], then: () => unknown): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const run = startCli(args, env);
  await waitForOutput(run, /… draining: \d+ running/);
  then();
  return run.done;
}

const up = (profile: string, node: string, ...more: string[]) => runCli(['model', 'up', profile, '--node', node, ...more], env);

test('an up that restarts a busy server: the requests in flight finish first, none is cut; an idle first up has no drain', async () => {
  const first = await up('best', 'simA');
  assert.equal(first.code, 0, first.stdout + first.stderr);
  assert.doesNotMatch(first.stdout, /→ 3\/9 drain/, 'nothing served: RUNTIME.md\'s steps as they were');
  const clients = await inFlight('simA', 2);
  const r = await whileDraining(['model', 'up', 'datagen', '--node', 'simA'], () => release('simA'));
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /… draining: 2 running, 0 waiting, \d+s of 300s/, 'the live line off a terminal: counts, time, budget');
  assert.match(r.stdout, /✓ 3\/9 drain on simA \([\d.ms]+\): 2 requests finished in \d+s/);
  const done = await clients.done;
  assert.deepEqual(done.map((c) => c.complete), [true, true], JSON.stringify(done));
  assert.equal(inflightCounts(sim!.node('simA').paths.state).cut, 0);
});

test('a short --drain-s budget stops anyway and says how many it cut; --json, the step and the sim agree', async () => {
  const clients = await inFlight('simA', 3);
  const r = await runCli(['model', 'down', '--node', 'simA', '--drain-s', '1', '--json'], env);
  release('simA');
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const result = JSON.parse(r.stdout) as DeployResult;
  assert.equal(result.drain?.idle, false);
  assert.equal(result.drain?.cut, 3);
  assert.equal(result.drain?.budgetS, 1);
  assert.equal(result.drain?.atSignal, 3, 'counted right before the stop signal');
  assert.ok(result.warnings.some((w) => /the budget of 1s ran out; at the stop signal 3 requests in flight \(GET \/metrics: 3 running, 0 waiting\): the stop cut them/.test(w)), result.warnings.join('\n'));
  assert.deepEqual((await clients.done).map((c) => c.complete), [false, false, false]);
  assert.equal(inflightCounts(sim!.node('simA').paths.state).cut, 3);
});

test('a request that begins after the drain saw the server idle: the stop cut it, and the result, the step lines and history say so', async () => {
  const node = sim!.node('simA');
  assert.equal((await up('best', 'simA')).code, 0);
  node.setControl({ generationMs: 200, holdGeneration: true });
  clearInflight(node.paths.state);
  const reads = metricsReads('simA');
  const run = startCli(['model', 'down', '--node', 'simA'], env);
  // The drain's sample finds nothing in flight and ends the drain; a client's request begins right after it (held in
  // flight), before the stop's signal: as a client sending back-to-back requests does.
  await until('the drain read /metrics', () => metricsReads('simA') > reads, 120_000, { everyMs: 10 });
  const client = streamChat(node.vllmPort);
  const r = await run.done;
  release('simA');
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /^! 1\/2 stop on simA \([\d.ms]+\): stopped[^\n]*; cut 1 request in flight \(GET \/metrics: 1 running, 0 waiting\)$/m, 'the stop cut it: `!`, not a ✓');
  assert.match(r.stdout, /drain: the drain saw the server idle, then requests came; at the stop signal 1 request in flight/);
  const outcome = await client;
  assert.equal(outcome.aborted, true, 'vLLM answered it finish_reason "abort"');
  assert.equal(inflightCounts(node.paths.state).cut, 1, 'the sim counts it cut too');
  const h = await runCli(['model', 'history', '--node', 'simA', '--json', '--limit', '1'], env);
  const row = (JSON.parse(h.stdout) as { action: string; drain: DeployResult['drain'] | null }[])[0];
  assert.equal(row?.action, 'down');
  assert.equal(row?.drain?.idle, true, 'the drain itself did reach idle');
  assert.equal(row?.drain?.cut, 1);
  assert.equal(row?.drain?.atSignal, 1);
  const table = await runCli(['model', 'history', '--node', 'simA', '--limit', '1'], env);
  assert.match(table.stdout, /down on simA .*; the stop cut 1 request$/m);
});

test('a /metrics that lies is not idle: a negative, NaN or another model\'s gauge falls back to the connections and says why', async () => {
  const node = sim!.node('simB');
  const cases: [MetricsLie, RegExp][] = [
    [{ running: '2.0', waiting: '-2.0' }, /vllm:num_requests_waiting is -2\.0 for model qwen38/],
    [{ running: 'NaN' }, /vllm:num_requests_running is NaN for model qwen38/],
    [{ waiting: '+Inf' }, /vllm:num_requests_waiting is \+Inf for model qwen38/],
    [{ modelName: 'another-model' }, /no vllm:num_requests_running and vllm:num_requests_waiting gauges for model qwen38/],
  ];
  for (const [lie, why] of cases) {
    assert.equal((await up('best', 'simB')).code, 0);
    const clients = await inFlight('simB', 1);
    node.setControl({ metricsLie: lie });
    const run = startCli(['model', 'down', '--node', 'simB'], env);
    // Not idle: the open connection of the request in flight holds the stop until it is done.
    await waitForOutput(run, /… draining: 1 open connection \(no \/metrics\)/);
    release('simB');
    const r = await run.done;
    node.setControl({ metricsLie: null });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, why, JSON.stringify(lie));
    assert.match(r.stdout, /counted \d+ open client connection\(s\) on port \d+ instead/);
    assert.equal((await clients.done)[0]?.complete, true, `${JSON.stringify(lie)}: the request finished before the stop`);
    assert.equal(inflightCounts(node.paths.state).cut, 0);
  }
});

test('down drains: the step says how many finished', async () => {
  assert.equal((await up('best', 'simA')).code, 0);
  const clients = await inFlight('simA', 1);
  const r = await whileDraining(['model', 'down', '--node', 'simA'], () => release('simA'));
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /✓ 1\/2 drain on simA \([\d.ms]+\): 1 request finished in \d+s/);
  assert.equal((await clients.done)[0]?.complete, true);
  assert.equal(inflightCounts(sim!.node('simA').paths.state).cut, 0);
});

test('each node of a rollout drains before its stop', async () => {
  for (const n of ['simA', 'simB']) assert.equal((await up('best', n)).code, 0);
  const stopsA = sim!.node('simA').stopShCalls().length;
  const stopsB = sim!.node('simB').stopShCalls().length;
  const readsBefore = { simA: metricsReads('simA'), simB: metricsReads('simB') };
  const a = await inFlight('simA', 1);
  const b = await inFlight('simB', 1);
  const run = startCli(['model', 'down', '--node', 'simA,simB', '--allow-outage'], env);
  // Each node's drain waits for its request (its GET /metrics polls show in the node's request log): simA's first,
  // then, simA released and stopped, simB's.
  for (const [n, stops] of [['simA', stopsA], ['simB', stopsB]] as const) {
    await until(`${n} draining`, () => metricsReads(n) > readsBefore[n], 120_000);
    // Two more of its probes (not a fixed time) and still no stop: the drain waits on the request.
    const seen = metricsReads(n);
    await until(`two more drain probes on ${n}`, () => metricsReads(n) >= seen + 2, 60_000);
    assert.equal(sim!.node(n).stopShCalls().length, stops, `${n} is not stopped while its request runs`);
    release(n);
  }
  const r = await run.done;
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.deepEqual([(await a.done)[0]?.complete, (await b.done)[0]?.complete], [true, true]);
  for (const n of ['simA', 'simB']) assert.equal(inflightCounts(sim!.node(n).paths.state).cut, 0, n);
});

test('a worker SIGKILLed during the drain: the drain resumes, then one stop, one start.sh, 0 cut', async () => {
  const node = sim!.node('simA');
  assert.equal((await up('best', 'simA')).code, 0);
  const stops = node.stopShCalls().length;
  const starts = node.startShCalls().length;
  const clients = await inFlight('simA', 2);
  const run = startCli(['model', 'up', 'datagen', '--node', 'simA'], env);
  await waitForOutput(run, /… draining: 2 running/);
  const worker = backgroundWorkerPid(stateDir());
  assert.ok(worker !== null, 'the background worker runs the deploy');
  process.kill(worker, 'SIGKILL');
  // The drain goes on on a new worker: a new background worker, then drain probes of its own (the dead worker's
  // probes ended with its ssh link), and still nothing stopped while the requests run.
  await until('a new background worker', () => ![null, worker].includes(backgroundWorkerPid(stateDir())), 120_000);
  const seen = metricsReads('simA');
  await until('the resumed drain probes the node', () => metricsReads('simA') >= seen + 2, 120_000);
  assert.equal(node.stopShCalls().length, stops, 'no stop while the requests run');
  release('simA');
  const r = await run.done;
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.deepEqual((await clients.done).map((c) => c.complete), [true, true]);
  assert.equal(node.stopShCalls().length, stops + 1, 'one stop');
  assert.equal(node.startShCalls().length, starts + 1, 'one start.sh');
  assert.equal(inflightCounts(node.paths.state).cut, 0);
});

test('a server without /metrics: pulse says so and counts the open client connections instead', async () => {
  const node = sim!.node('simB');
  assert.equal((await up('best', 'simB')).code, 0);
  node.setControl({ metricsMissing: true });
  const clients = await inFlight('simB', 1);
  const run = startCli(['model', 'down', '--node', 'simB'], env);
  await waitForOutput(run, /… draining: \d+ open connections? \(no \/metrics\)/);
  release('simB');
  const r = await run.done;
  node.setControl({ metricsMissing: false });
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /drain: the server serves no \/metrics \(404: an older build, or its Prometheus page is off\); counted \d+ open client connection\(s\) on port \d+ instead/);
  assert.equal((await clients.done)[0]?.complete, true, 'the open connection held the stop until the request was done');
});

test("a protected node: the drain reads /metrics with the node's key, which never appears in any output", async () => {
  const node = sim!.node('simC');
  const sample = await readFile(path.join(node.recipeDir, '.env.sample'), 'utf8');
  await writeFile(node.envPath, `${sample}\nAPI_KEY=${SECRETS.API_KEY}\nHF_TOKEN=${SECRETS.HF_TOKEN}\n`, { mode: 0o600 });
  const first = await up('best', 'simC', '--yes', '--verbose');
  assert.equal(first.code, 0, first.stdout + first.stderr);
  const clients = await inFlight('simC', 1, SECRETS.API_KEY);
  const r = await whileDraining(['model', 'up', 'datagen', '--node', 'simC', '--yes', '--verbose'], () => release('simC'));
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /✓ 3\/9 drain on simC \([\d.ms]+\): 1 request finished/);
  assert.equal((await clients.done)[0]?.complete, true);
  const log = await readFile(path.join(stateDir(), 'logs', 'worker.log'), 'utf8').catch(() => '');
  for (const text of [first.stdout, first.stderr, r.stdout, r.stderr, log]) {
    for (const needle of secretNeedles()) assert.ok(!text.includes(needle), 'a secret in the output');
  }
  const h = await runCli(['model', 'history', '--node', 'simC', '--json'], env);
  for (const needle of secretNeedles()) assert.ok(!h.stdout.includes(needle));
});

test('a start refused while the page cache holds the memory (vllm#48140): the failure block names it and the relief', async () => {
  const node = sim!.node('simB');
  node.setFailure('page-cache-held');
  const r = await up('datagen', 'simB', '--json');
  const text = await up('datagen', 'simB');
  node.setFailure('none');
  assert.notEqual(r.code, 0);
  const block = JSON.parse(r.stdout) as { failure?: { node?: { knownFailure?: { id: string; summary: string; relief: string } | null } } };
  const known = block.failure?.node?.knownFailure;
  assert.equal(known?.id, 'vllm-48140', r.stdout);
  assert.match(known?.summary ?? '', /61\.05 of 119\.7 GiB free at start.*vllm-project\/vllm#48140/);
  assert.match(known?.relief ?? '', /MEMWATCH_RELIEF=drop_caches/);
  assert.match(text.stdout + text.stderr, /known failure: vLLM refused to start/);
  assert.equal((await up('best', 'simB')).code, 0, 'it serves again once the memory is free');
});
