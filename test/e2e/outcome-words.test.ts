/**
 * One word per outcome, through the CLI on simulated nodes and the embedded Temporal server: a rollout the live
 * screen calls REFUSED (exit 4) or STOPPED (exit 13) is REFUSED / STOPPED in `history` too, a cancelled up is
 * CANCELLED in history and "was cancelled" in status, and `history --failed` lists the failure but none of those.
 * simA is the gateway node (the one endpoint the gateway reaches); the others listen on loopback.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { CLI, runCli, startCli, waitForOutput } from '../helpers/cli.js';
import { runInPty } from '../helpers/pty.js';
import { startSimCli, stopSimCli, type SimCli } from '../helpers/sim-cli.js';
import { until } from '../helpers/until.js';
import type { HistoryRow } from '../../cli/commands/history.js';

let rig: SimCli | null = null;
const env = (): NodeJS.ProcessEnv => rig!.env;
const starts = (node: string): number => rig!.sim.node(node).startShCalls().length;

before(async () => {
  rig = await startSimCli('pulse-outcome-words-', { nodes: ['simA', 'simB', 'simC'], readyDelayMs: 300 });
});
after(() => stopSimCli(rig?.sim ?? null, rig?.dir ?? ''));

async function history(args: string[] = []): Promise<HistoryRow[]> {
  const h = await runCli(['model', 'history', '--json', ...args], env());
  assert.equal(h.code, 0, h.stdout + h.stderr);
  return JSON.parse(h.stdout) as HistoryRow[];
}

test('REFUSED, STOPPED, CANCELLED and FAILED: the same word on the live screen, in history and status; --failed lists the failure only', async () => {
  // simA serves, so a rollout whose first step takes simA down would leave no endpoint that serves: REFUSED.
  const a = await runCli(['model', 'up', 'best', '--node', 'simA', '--yes'], env());
  assert.equal(a.code, 0, a.stdout + a.stderr);
  const refused = await runCli(['model', 'up', 'datagen', '--node', 'simA,simB', '--yes'], env());
  assert.equal(refused.code, 4, refused.stdout + refused.stderr);
  assert.match(refused.stdout, /rollout up datagen: REFUSED/);

  // a rollout stopped by request after its current node: STOPPED (exit 13)
  rig!.sim.node('simB').setControl({ holdReady: true });
  const before = starts('simB');
  const run = startCli(['model', 'up', 'best', '--node', 'simB,simC'], env());
  try {
    await until('simB started', () => starts('simB') > before, 120_000);
    const c = await runCli(['model', 'cancel', '--node', 'simC'], env());
    assert.equal(c.code, 0, c.stdout + c.stderr);
  } finally {
    rig!.sim.node('simB').setControl({ holdReady: false });
  }
  const stopped = await run.done;
  assert.equal(stopped.code, 13, stopped.stdout + stopped.stderr);
  assert.match(stopped.stdout, /rollout up best: STOPPED/);

  // a cancelled up: CANCELLED on the screen, in history, and "was cancelled" in status (its node is marked failed)
  rig!.sim.node('simC').setReadyDelay(60_000);
  const up = startCli(['model', 'up', 'datagen', '--node', 'simC'], env());
  try {
    await waitForOutput(up, /→ 7\/9 readiness on simC/);
    const c = await runCli(['model', 'cancel', '--node', 'simC'], env());
    assert.equal(c.code, 0, c.stdout + c.stderr);
  } finally {
    rig!.sim.node('simC').setReadyDelay(300);
  }
  const cancelled = await up.done;
  assert.equal(cancelled.code, 13, cancelled.stdout + cancelled.stderr);
  assert.match(cancelled.stdout, /up datagen on simC: CANCELLED/);
  const st = await runCli(['model', 'status', '--node', 'simC'], env());
  assert.match(st.stdout.replace(/\n {2,}/g, ' '), /failed: last up datagen was cancelled at /, st.stdout);
  assert.doesNotMatch(st.stdout, /last up datagen failed/);

  // a real failure: the server crashes at its start
  rig!.sim.node('simC').setFailure('crash-at-start');
  let failed;
  try {
    failed = await runCli(['model', 'up', 'best', '--node', 'simC', '--timeout-s', '60'], env());
  } finally {
    rig!.sim.node('simC').setFailure('none');
  }
  assert.notEqual(failed.code, 0, failed.stdout + failed.stderr);
  assert.match(failed.stdout, /up best on simC: FAILED/);

  const h = await runCli(['model', 'history'], env());
  assert.equal(h.code, 0, h.stdout + h.stderr);
  const table = h.stdout;
  assert.match(table, /rollout.*REFUSED: simA refused, simB skipped/, table);
  assert.match(table, /rollout.*STOPPED: simB succeeded, simC skipped/, table);
  assert.match(table, /up datagen on simC .*CANCELLED; node marked failed/, table);
  assert.match(table, /up best on simC .*FAILED; node marked failed/, table);
  assert.doesNotMatch(table, /FAILED: simA refused|FAILED: simB succeeded/, table);

  // on a terminal each row is one line, cut to its width (the REFUSED row's result is longer than 80 columns)
  const tty = await runInPty(80, 24, [process.execPath, CLI, 'model', 'history'], { ...process.env, ...env(), NO_COLOR: '1' });
  assert.equal(tty.code, 0, tty.output);
  const printed = tty.output.replace(/\r\n/g, '\n').trimEnd().split('\n');
  for (const l of printed) assert.ok(Array.from(l).length <= 80, `one line each at 80 columns: ${l}`);
  assert.match(tty.output, /  REFUSED: simA.*…\r\n/);

  const failures = await history(['--failed']);
  assert.deepEqual(failures.map((r) => `${r.action} ${r.profile ?? ''} ${r.node ?? ''}`), ['up best simC'], JSON.stringify(failures, null, 2));
});

test('cancel with nothing to cancel is no error (exit 0), and on a protected node it does not first ask for --yes', async () => {
  for (const node of ['simA', 'simB']) { // simA is protected
    const c = await runCli(['model', 'cancel', '--node', node], env());
    assert.equal(c.code, 0, c.stdout + c.stderr);
    assert.match(c.stdout, new RegExp(`^nothing to cancel: no deploy runs on ${node}\nsee past deploys with: pulse model history --node ${node}\n$`));
    assert.equal(c.stderr, '');
  }
  const unknown = await runCli(['model', 'cancel', '--node', 'simZ'], env());
  assert.equal(unknown.code, 3, 'an unknown node is still a config error');
});
