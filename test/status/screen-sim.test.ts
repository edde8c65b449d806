/**
 * Issue 30, items 1, 2 and 4 and `status --watch`, through the CLI on three simulated nodes (real sshd, the
 * simulated vLLM), in a pseudo-terminal where the screen matters (80 and 120 columns):
 * - status never reports a node healthier than the strongest signal: a dead engine (/health 503 while /v1/models
 *   still answers 200), a node state `failed` (a cancelled deploy whose server came up anyway), a watchdog that
 *   disabled the endpoint: none of them is `serving`, the exit code is 7 and --json's allHealthy false;
 * - the ENDPOINT column says where the gateway sends traffic (the gateway backend file, and why not), and a rollout's
 *   plan counts as serving meanwhile only an enabled endpoint whose node can take traffic now;
 * - without --node the fleet table alone, sized to the terminal, no wrapped row; the detail behind --node / --wide;
 * - --watch redraws in place on a terminal, prints round after round off one, and Ctrl-C ends it with the last
 *   round's exit code; --json errors are JSON.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import type { NodeStatus, StatusReport } from '../../runtime/status/types.js';
import type { WatchdogRecord } from '../../runtime/model/index.js';
import { CLI } from '../helpers/cli.js';
import { TestTerminal } from '../helpers/term.js';
import { hasPty, runInPty } from '../helpers/pty.js';
import { runSimCli, saveState, settleRequests, startServer, startStatusSim, writePulseEnv } from './sim-helpers.js';
import type { StatusSim } from './sim-helpers.js';

let s: StatusSim;

const cli = (args: string[], env: Record<string, string> = {}) => runSimCli(s, args, env);
const ptyEnv = (): NodeJS.ProcessEnv => ({ ...process.env, ...s.sim.env(), PULSE_STATE_DIR: s.stateDir, TEMPORAL_ADDRESS: '', NO_COLOR: '' });
const pty = (cols: number, args: string[], opts: Parameters<typeof runInPty>[4] = {}) =>
  runInPty(cols, 24, [process.execPath, CLI, '--nodes', s.nodesFile, ...args], ptyEnv(), opts);

async function report(args: string[] = []): Promise<{ code: number; r: StatusReport }> {
  const out = await cli(['model', 'status', '--json', ...args]);
  return { code: out.code, r: JSON.parse(out.stdout) as StatusReport };
}
const nodeOf = (r: StatusReport, name: string): NodeStatus => {
  const n = r.nodes.find((x) => x.node === name);
  assert.ok(n, name);
  return n;
};

const WATCHDOG: WatchdogRecord = {
  at: '2026-09-23T10:20:00.000Z', verdict: 'down', reason: 'engine not healthy: /health 503', judged: 'down', since: '2026-09-23T10:17:00.000Z',
  streak: 3, sinceHeal: 3, disabled: 'watchdog: 3 failed checks in a row since 2026-09-23T10:17:00.000Z: engine not healthy: /health 503',
  heals: [], healsTotal: 0, gaveUp: null, notes: [], restartCount: 0,
};

describe('status on three simulated nodes: the truth, the endpoint, one screen', () => {
  before(async () => {
    s = await startStatusSim(3, { protected: [] });
    for (const n of s.sim.nodes.slice(0, 2)) {
      writePulseEnv(n);
      startServer(n);
      await settleRequests(n);
    }
    await saveState(s.stateDir, 'spark1');
    // A deploy cancelled during its readiness wait: the node is marked failed, its server came up anyway.
    await saveState(s.stateDir, 'spark2', { state: 'failed', error: 'cancelled: the deploy was cancelled (pulse model cancel) or terminated' });
    const frag = await cli(['model', 'fragment']);
    assert.equal(frag.code, 0, frag.stdout + frag.stderr);
  });
  after(async () => {
    await s?.stop();
  });

  test('item 1: a dead engine (/health 503, /v1/models 200) is failing, not serving: exit 7, allHealthy false', async () => {
    const healthy = await report(['--node', 'spark1']);
    assert.equal(nodeOf(healthy.r, 'spark1').verdict, 'serving', JSON.stringify(nodeOf(healthy.r, 'spark1').health));
    assert.equal(healthy.code, 0);
    s.sim.node('spark1').setControl({ engineDead: true });
    try {
      const { code, r } = await report();
      const n = nodeOf(r, 'spark1');
      assert.equal(n.health.httpStatus, 200, 'vLLM still answers /v1/models');
      assert.equal(n.health.healthRoute, 503);
      assert.equal(n.verdict, 'failing');
      assert.equal(n.healthy, false);
      assert.equal(r.allHealthy, false);
      assert.equal(code, 7);
      const table = await cli(['model', 'status']);
      assert.equal(table.code, 7);
      assert.match(table.stdout, /^spark1 +failing: \/health 503 /m, table.stdout);
      assert.match(table.stdout, /^spark1 +failing: GET \/health answered 503: the engine is not healthy/m, table.stdout);
    } finally {
      s.sim.node('spark1').setControl({ engineDead: false });
    }
  });

  test('item 1: a node marked failed (cancelled deploy) whose server answers is failed, not serving: exit 7', async () => {
    const { code, r } = await report(['--node', 'spark2']);
    const n = nodeOf(r, 'spark2');
    assert.equal(n.health.httpStatus, 200, 'its server answers');
    assert.equal(n.verdict, 'failed');
    assert.equal(r.allHealthy, false);
    assert.equal(code, 7);
    const table = await cli(['model', 'status']);
    assert.match(table.stdout.replace(/\n {8}/g, ' '), /^spark2 +failed: last up best was cancelled at \S+: cancelled: .*a server answers, but pulse does not count a failed node as serving/m, table.stdout);
  });

  test('item 1 and 2: the watchdog disabled the endpoint: failing, ENDPOINT disabled with its reason', async () => {
    await saveState(s.stateDir, 'spark1', { watchdog: WATCHDOG });
    try {
      assert.equal((await cli(['model', 'fragment'])).code, 0);
      const { code, r } = await report();
      const n = nodeOf(r, 'spark1');
      assert.equal(n.health.ok, true, 'the server itself answers');
      assert.equal(n.verdict, 'failing');
      assert.equal(code, 7);
      // spark1 is the one endpoint the gateway reaches: the file keeps it enabled by the fallback, and says so.
      assert.deepEqual([n.endpoint?.enabled, n.endpoint?.fallback], [true, true]);
      assert.match(n.endpoint?.reason ?? '', /^kept enabled by the fallback: watchdog: 3 failed checks in a row/);
      const table = await cli(['model', 'status'], { COLUMNS: '120' });
      assert.match(table.stdout, /^NODE +HEALTH +ENDPOINT +CONTAINER +PROFILE +DRIFT +KV CACHE +AVAIL GiB/m, table.stdout);
      assert.match(table.stdout, /^spark1 +failing: watchdog +fallback: watchdog +running +best +ok /m, table.stdout);
      assert.match(table.stdout.replace(/\n +/g, ' '), /spark1 +failing: the watchdog holds it down: watchdog: 3 failed checks in a row .* endpoint kept enabled by the fallback: the gateway rejects/, table.stdout);
    } finally {
      await saveState(s.stateDir, 'spark1');
      assert.equal((await cli(['model', 'fragment'])).code, 0);
    }
  });

  test('item 2: ENDPOINT says where traffic goes: enabled, or disabled and why (the gateway backend file)', async () => {
    const { r } = await report();
    assert.deepEqual(r.nodes.map((n) => [n.node, n.endpoint?.enabled]), [['spark1', true], ['spark2', false], ['spark3', false]]);
    assert.match(nodeOf(r, 'spark3').endpoint?.reason ?? '', /cannot reach this node/);
    const table = await cli(['model', 'status']);
    assert.match(table.stdout, /^spark1 +serving +enabled +running /m, table.stdout);
    assert.match(table.stdout, /^spark2 +failed +disabled: loopback +running /m, table.stdout);
    assert.match(table.stdout, /^spark3 +stopped +disabled: loopback +none /m, table.stdout);
    const one = await cli(['model', 'status', '--node', 'spark2']);
    assert.match(one.stdout, /^ {2}endpoint +disabled: the gateway host cannot reach this node/m, one.stdout);
  });

  test('item 2: the rollout plan counts an endpoint as serving only while its node can take traffic', async () => {
    const ok = await cli(['model', 'up', 'best', '--node', 'spark2,spark3', '--dry-run']);
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    assert.equal(ok.stdout.match(/serving meanwhile: spark1$/gm)?.length, 2, ok.stdout);
    s.sim.node('spark1').setControl({ engineDead: true });
    try {
      const dead = await cli(['model', 'up', 'best', '--node', 'spark2,spark3', '--dry-run']);
      assert.equal(dead.code, 0, dead.stdout + dead.stderr);
      assert.equal(dead.stdout.match(/serving meanwhile: NO endpoint$/gm)?.length, 2, dead.stdout);
      assert.match(dead.stdout, /^not counted as serving: spark1 \(enabled in the gateway file, but failing: \/health 503\)$/m, dead.stdout);
    } finally {
      s.sim.node('spark1').setControl({ engineDead: false });
    }
  });

  for (const cols of [80, 120]) {
    test(`item 4: in a ${cols}-column terminal the fleet table alone, every row on one line, the columns the spec names`, { skip: !hasPty && 'no python3 pty' }, async () => {
      const run = await pty(cols, ['model', 'status']);
      assert.equal(run.code, 7);
      const screen = new TestTerminal(cols).write(run.output).lines();
      if (process.env['SHOW_SCREEN']) writeFileSync(`${process.env['SHOW_SCREEN']}-${cols}`, screen.join('\n'));
      const printed = run.output.replace(/\r\n/g, '\n').replace(/\u001b\[[0-9;]*m/g, '').trimEnd().split('\n');
      assert.equal(screen.length, printed.length, `no line wrapped:\n${screen.join('\n')}`);
      assert.ok(screen.length <= 23, `fits a 24-row screen:\n${screen.join('\n')}`);
      for (const l of screen) assert.ok(l.length <= cols, `fits ${cols} columns: ${l}`);
      const header = screen[0] ?? '';
      for (const col of ['NODE', 'HEALTH', 'ENDPOINT', 'CONTAINER', 'PROFILE', 'DRIFT', 'KV', 'GiB']) assert.ok(header.includes(col), `${col} in ${header}`);
      assert.match(screen[1] ?? '', /^spark1 +serving +enabled +running +best +ok +[\d.]+[Mk]/);
      assert.match(screen.join('\n'), /^spark2 +failed +disabled/m);
      // The detail is behind --node: no detail block in the default view.
      assert.doesNotMatch(screen.join('\n'), /^ {2}(container|memory|kv cache) /m);
      // Column starts line up: each row's HEALTH cell starts where the header's does.
      const at = header.indexOf('HEALTH');
      for (const row of screen.slice(1, 4)) assert.match(row.slice(at), /^(serving|failed|stopped)/, row);
      if (cols >= 120) assert.match(header, /KV CACHE +AVAIL GiB/);
      const one = await pty(cols, ['model', 'status', '--node', 'spark1']);
      const detail = new TestTerminal(cols).write(one.output).lines();
      assert.match(detail.join('\n'), /^ {2}container +vllm-qwen38 running/m);
      for (const l of detail.filter((x) => !x.startsWith('  ui '))) assert.ok(l.length <= cols, `fits ${cols}: ${l}`);
    });
  }

  test('--watch on a terminal redraws in place; Ctrl-C ends it with the last round\'s exit code', { skip: !hasPty && 'no python3 pty' }, async () => {
    const run = await pty(80, ['model', 'status', '--watch', '1'], { interrupt: /every 1s: pulse model status/, times: 3 });
    assert.equal(run.code, 7, run.output);
    const screen = new TestTerminal(80).write(run.output).lines();
    assert.equal(screen.filter((l) => l.startsWith('every 1s: pulse model status')).length, 1, screen.join('\n'));
    assert.equal(screen.filter((l) => l.startsWith('NODE ')).length, 1, screen.join('\n'));
    assert.ok((run.output.match(/NODE +HEALTH/g) ?? []).length >= 3, 'three rounds were drawn');
  });

  test('--watch off a terminal: round after round; --json: one report per line', async () => {
    const { startCli } = await import('../helpers/cli.js');
    const env = { ...s.sim.env(), PULSE_STATE_DIR: s.stateDir, TEMPORAL_ADDRESS: undefined };
    const plain = startCli(['--nodes', s.nodesFile, 'model', 'status', '--watch', '1'], env);
    const json = startCli(['--nodes', s.nodesFile, 'model', 'status', '--watch', '1', '--json'], env);
    const { waitForOutput } = await import('../helpers/cli.js');
    await waitForOutput(plain, /(every 1s: pulse model status[\s\S]*){2}/);
    await waitForOutput(json, /(\n[\s\S]*){2}/);
    plain.child.kill('SIGINT');
    json.child.kill('SIGINT');
    const [p, j] = await Promise.all([plain.done, json.done]);
    assert.equal(p.code, 7, p.stderr);
    assert.doesNotMatch(p.stdout, /\u001b/, 'no escape sequence off a terminal');
    const lines = j.stdout.trim().split('\n');
    assert.ok(lines.length >= 2);
    for (const l of lines) assert.equal((JSON.parse(l) as StatusReport).version, 1);
    assert.equal(j.code, 7);
  });

  test('status --json prints its errors as JSON', async () => {
    const unknown = await cli(['model', 'status', '--json', '--node', 'spark9']);
    assert.equal(unknown.code, 3);
    const e = JSON.parse(unknown.stdout) as { error: { kind: string; exit: number; message: string } };
    assert.equal(e.error.exit, 3);
    assert.match(e.error.message, /spark9/);
    const usage = await cli(['model', 'status', '--json', '--watch', 'soon']);
    assert.equal(usage.code, 2);
    assert.equal((JSON.parse(usage.stdout) as { error: { kind: string } }).error.kind, 'usage');
  });
});
