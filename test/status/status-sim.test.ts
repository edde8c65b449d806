/**
 * `status` against 8 simulated nodes over real sshd, one per state the spec names: healthy (spark1, protected),
 * healthy with a rotated log (spark2), down (spark3), starting (spark4), failed (spark5), drifted .env (spark6),
 * high watermark factor (spark7), unreachable (spark8). Each field is checked in --json and in the table (--wide:
 * the fleet table and every node's detail).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync } from 'node:fs';
import type { StatusReport, NodeStatus } from '../../runtime/status/types.js';
import { SECRET_KEY, runSimCli, saveState, startServer, startStatusSim, writePulseEnv } from './sim-helpers.js';
import type { CliResult } from '../helpers/cli.js';
import type { StatusSim } from './sim-helpers.js';

let s: StatusSim;
let json: CliResult;
let table: CliResult;
let report: StatusReport;
const outputs: string[] = [];
const KV_SAVED = 'INFO 09-23 10:15:00 [kv_cache_utils.py:1087] GPU KV cache size: 999,999 tokens';

function node(name: string): NodeStatus {
  const n = report.nodes.find((x) => x.node === name);
  assert.ok(n, `${name} is in the report`);
  return n;
}

/** The detail block of one node in the table (from its title line to the next blank line). */
function block(name: string): string {
  const lines = table.stdout.split('\n');
  const title = new RegExp(`^${name}( \\(protected\\))?(  recipe .*)?$`);
  const start = lines.findIndex((l) => title.test(l));
  assert.ok(start >= 0, `table has a block for ${name}`);
  const end = lines.indexOf('', start);
  return lines.slice(start, end === -1 ? undefined : end).join('\n');
}

function row(name: string): string {
  return table.stdout.split('\n').find((l) => l.startsWith(`${name} `)) ?? '';
}

async function cli(args: string[]): Promise<CliResult> {
  const r = await runSimCli(s, args);
  outputs.push(r.stdout, r.stderr);
  return r;
}

describe('status against 8 simulated nodes', () => {
  before(async () => {
    s = await startStatusSim(8);
    const n = (name: string) => s.sim.node(name);
    for (const x of s.sim.nodes) writePulseEnv(x);
    for (const name of ['spark1', 'spark2', 'spark6']) startServer(n(name));
    await saveState(s.stateDir, 'spark1');
    await saveState(s.stateDir, 'spark2', { kvCacheLine: KV_SAVED });
    n('spark2').rotateLog();
    await saveState(s.stateDir, 'spark3', { state: 'down', action: 'down', profile: null });
    writePulseEnv(n('spark4'), { readyTimeoutS: 120 });
    n('spark4').setFailure('never-ready');
    startServer(n('spark4'), true);
    await saveState(s.stateDir, 'spark4', { state: 'starting' });
    n('spark5').setFailure('crash-at-start');
    assert.throws(() => startServer(n('spark5')));
    await saveState(s.stateDir, 'spark5', { state: 'failed', error: 'readiness: container exited', kvCacheLine: null });
    appendFileSync(n('spark6').envPath, 'MAX_NUM_SEQS="16"\n'); // somebody edits the file by hand
    n('spark7').setWatermark(300);
    await n('spark8').stopSshd();
    // spark4's container must run (never ready) before status looks at it.
    for (let i = 0; i < 100 && !n('spark4').containers().some((c) => c.State.Running); i++) await new Promise((r) => setTimeout(r, 50));
    json = await cli(['model', 'status', '--json']);
    report = JSON.parse(json.stdout) as StatusReport;
    table = await cli(['model', 'status', '--wide']);
  });
  after(async () => {
    await s?.stop();
  });

  test('exit code says one node did not answer; the other seven answered in the same run', () => {
    assert.equal(json.code, 6, json.stderr);
    assert.equal(table.code, 6);
    assert.equal(report.version, 1);
    assert.equal(report.allAnswered, false);
    assert.deepEqual(report.nodes.map((x) => [x.node, x.answered]), [1, 2, 3, 4, 5, 6, 7, 8].map((i) => [`spark${i}`, i !== 8]));
    assert.match(report.notes.join('\n'), /no Temporal server is configured or running/);
  });

  test('one health word per node, each with one meaning; allHealthy is false', () => {
    assert.deepEqual(report.nodes.map((x) => [x.node, x.verdict]), [
      ['spark1', 'running'], ['spark2', 'serving'], ['spark3', 'stopped'], ['spark4', 'starting'],
      ['spark5', 'failed'], ['spark6', 'serving'], ['spark7', 'stopped'], ['spark8', 'unreachable'],
    ]);
    assert.equal(report.allHealthy, false);
  });

  test('status exits 7 when a node it shows is unhealthy, 0 when every node it shows is healthy', async () => {
    const failed = await cli(['model', 'status', '--node', 'spark5']);
    assert.equal(failed.code, 7, failed.stderr);
    const starting = await cli(['model', 'status', '--node', 'spark4', '--json']);
    assert.equal(starting.code, 0, 'a server that is still starting is not unhealthy');
    const serving = await cli(['model', 'status', '--node', 'spark2']);
    assert.equal(serving.code, 0, serving.stderr);
  });

  test('healthy (spark1, protected): container, identity, KV line, memory, GPU list, last up; no health without --yes', () => {
    const x = node('spark1');
    assert.equal(x.protected, true);
    assert.deepEqual([x.container?.state, x.container?.running, x.container?.image], ['running', true, 'vllm-qwen38:spark-tuning-c840e30']);
    assert.ok(x.container?.startedAt);
    assert.deepEqual([x.env?.profile, x.env?.node, x.env?.recipe, x.env?.overlay, x.env?.drift], ['best', 'spark1', 'qwen38-flash', 'none', false]);
    assert.equal(x.health.checked, false);
    assert.match(x.health.skipped ?? '', /protected node, no HTTP request without --yes/);
    assert.equal(x.kvCache.source, 'log');
    assert.match(x.kvCache.line ?? '', /GPU KV cache size: [\d,]+ tokens/);
    assert.equal(x.memory?.gateGiB, 100);
    assert.equal(typeof x.memory?.availableGiB, 'number');
    assert.equal(x.gpuProcesses?.length, 1);
    assert.equal(x.lastDeploy?.state, 'up');
    assert.match(block('spark1'), /health +not checked: protected node, no HTTP request without --yes/);
    assert.match(block('spark1'), /gpu procs +\d+ VLLM::EngineCore 98304 MiB \(information only\)/);
    assert.match(block('spark1'), /last +up best → up at 2026-09-23T10:15:00Z/);
    assert.match(block('spark1'), /container +vllm-qwen38 running since \S+Z \(\S+ ago\), image\s+vllm-qwen38:spark-tuning-c840e30/);
    // Available of total, then the gate; a running server holds its memory, so no "below" for a healthy node.
    assert.match(block('spark1'), /memory +[\d.]+ GiB available of 128 GiB, gate 100 GiB \(the server holds the rest; the gate\s+applies\s+before\s+a\s+start\)/);
    assert.doesNotMatch(block('spark1'), /below/i);
    assert.match(row('spark1'), / [\d.]+( of |\/)128 /);
    assert.match(block('spark1'), /\.env +best on spark1, recipe qwen38-flash, overlay none, rendered 2026-09-23T10:15:00Z/);
    assert.match(row('spark1'), /^spark1 +running \(no HTTP\) +- +running +best +ok /);
    assert.equal(x.verdict, 'running');
  });

  test('healthy with a rotated log (spark2): health 200 with model and max_model_len; KV value from the state, marked', () => {
    const x = node('spark2');
    assert.deepEqual([x.health.checked, x.health.httpStatus, x.health.ok, x.health.servedModels, x.health.maxModelLen], [true, 200, true, ['qwen38'], 524288]);
    // A line saved by an older pulse keeps vLLM's logger prefix; status shows it in the one canonical shape.
    assert.deepEqual(x.kvCache, { line: 'GPU KV cache size: 999,999 tokens', source: 'state', tokens: 999999, concurrency: null, concurrencyForTokens: null });
    assert.match(x.warnings.join('\n'), /rotated/);
    assert.match(block('spark2'), /kv cache +GPU KV cache size: 999,999 tokens \(saved by up: not in the log's last lines\)/);
    assert.match(block('spark2'), /health +HTTP 200 qwen38 max_model_len 524288/);
    assert.match(row('spark2'), /^spark2 +serving +- +running +best +ok /);
    assert.deepEqual([x.verdict, x.healthy], ['serving', true]);
  });

  test('down (spark3): no container, no request, last down', () => {
    const x = node('spark3');
    assert.equal(x.container?.exists, false);
    assert.equal(x.container?.state, 'absent');
    assert.match(x.health.skipped ?? '', /no container runs/);
    assert.deepEqual(x.kvCache, { line: null, source: null, tokens: null, concurrency: null, concurrencyForTokens: null });
    assert.equal(x.lastDeploy?.state, 'down');
    assert.deepEqual([x.verdict, x.healthy], ['stopped', true]);
    assert.match(block('spark3'), /memory +[\d.]+ GiB available of 128 GiB, gate 100 GiB \((at the gate: an up can start|BELOW the\s+gate:\s+an\s+up\s+would\s+wait\s+for\s+memory)\)/);
    assert.match(block('spark3'), /no such container/);
    assert.match(row('spark3'), /^spark3 +stopped +- +none /);
    assert.deepEqual(node('spark3').gpuProcesses, [], 'nvidia-smi answered with no process');
    assert.match(block('spark3'), /gpu procs +none listed \(information only\)/);
    assert.match(block('spark3'), /last +down  → down at/);
  });

  test('starting (spark4): container runs, the server does not answer yet, last state starting', () => {
    const x = node('spark4');
    assert.equal(x.container?.running, true);
    assert.equal(x.health.checked, true);
    assert.equal(x.health.ok, false);
    assert.equal(x.health.httpStatus, null);
    assert.equal(x.lastDeploy?.state, 'starting');
    // A server that is still starting is "starting", never "FAIL none" (issue 18).
    assert.match(row('spark4'), /^spark4 +starting +- +running .* starting/);
    assert.doesNotMatch(row('spark4'), /FAIL/);
    assert.deepEqual([x.verdict, x.healthy], ['starting', true]);
  });

  test('failed (spark5): the container exited, the state says failed and why', () => {
    const x = node('spark5');
    assert.deepEqual([x.container?.exists, x.container?.running, x.container?.state], [true, false, 'exited']);
    assert.deepEqual([x.lastDeploy?.state, x.lastDeploy?.error], ['failed', 'readiness: container exited']);
    assert.equal(x.kvCache.line, null);
    assert.match(block('spark5'), /last +up best → failed at .*: readiness: container exited/);
    assert.deepEqual([x.verdict, x.healthy], ['failed', false]);
    assert.match(row('spark5'), /^spark5 +failed +- +exited .* failed/);
  });

  test('drifted .env (spark6): DRIFT in JSON, row and block; carried API_KEY alone is not drift (spark2)', () => {
    assert.equal(node('spark6').env?.drift, true);
    assert.equal(node('spark2').env?.drift, false, 'spark2 carries API_KEY= at the end and is not drifted');
    assert.match(node('spark6').warnings.join('\n'), /edited after pulse rendered it/);
    assert.match(row('spark6'), / DRIFT /);
    assert.match(block('spark6'), /DRIFT: edited after render/);
  });

  test('high watermark factor (spark7): factor shown, warning that the gate may be unreachable', () => {
    const x = node('spark7');
    assert.equal(x.memory?.watermarkScaleFactor, 300);
    assert.match(x.memory?.warning ?? '', /watermark_scale_factor is 300.*gate may be unreachable/);
    assert.match(block('spark7'), /watermark_scale_factor 300/);
    assert.match(block('spark7'), /warning +vm\.watermark_scale_factor is 300/);
    assert.equal(node('spark3').memory?.warning, null, 'the default factor gives no warning');
  });

  test('unreachable (spark8): shown as unreachable with its saved state, without blocking the others', () => {
    const x = node('spark8');
    assert.equal(x.answered, false);
    assert.match(x.error ?? '', /unreachable|connect|refused/i);
    assert.equal(x.container, null);
    assert.match(row('spark8'), /^spark8 +unreachable +- +\? /);
    assert.match(block('spark8'), /error/);
  });

  test('the table fits 100 columns, has no colour when not a TTY, and no secret appears anywhere', () => {
    for (const line of table.stdout.split('\n')) assert.ok(line.length <= 100, `too wide (${line.length}): ${line}`);
    assert.doesNotMatch(table.stdout, /\u001b\[/);
    for (const out of outputs) assert.ok(!out.includes(SECRET_KEY), 'the API key never leaves the node');
  });
});
