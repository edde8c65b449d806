/**
 * After an up that failed and auto-rolled back, as an operator sees it in an 80x24 terminal (python3's pty, the
 * screen rebuilt by test/helpers/term.ts), against a simulated node over real sshd and the embedded Temporal dev
 * server: the failure block shows the failed start (its log, its container's last lines, read before the rollback
 * removed that container), not the restored server, and tells nobody to stop the server the rollback brought back;
 * the failed start's log stays reachable; and a plain rollback afterwards does not bring back the .env that failed.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Sim } from '../sim/index.js';
import { CLI, runCli } from '../helpers/cli.js';
import { savedNodeState, startSimCli, stopSimCli } from '../helpers/sim-cli.js';
import { hasPty, runInPty } from '../helpers/pty.js';
import { TestTerminal } from '../helpers/term.js';
import { until } from '../helpers/until.js';

let sim: Sim | null = null;
let dir = '';
let env: NodeJS.ProcessEnv = {};
const skip = !hasPty && 'no python3 pty';
/** What the simulated engine logs when it dies while it loads (test/sim/vllm.ts, failure die-during-readiness). */
const DEATH = 'RuntimeError: Engine core initialization failed';

before(async () => {
  ({ sim, dir, env } = await startSimCli('pulse-failed-start-', { nodes: ['simA'], readyDelayMs: 300 }));
  const first = await runCli(['model', 'up', 'best', '--node', 'simA'], env); // what the rollback goes back to
  assert.equal(first.code, 0, first.stdout + first.stderr);
});

after(() => stopSimCli(sim, dir));

test('after a failed up that auto-rolled back, the block shows the failed start, not the restored server (80x24)', { skip }, async () => {
  const node = sim!.node('simA');
  const starts = node.startShCalls().length;
  const logs = (): string => {
    try {
      return node.docker('logs', node.containerName);
    } catch {
      return '';
    }
  };
  // The up's server dies while it loads; the rollback's (started after it) is healthy: the engine reads its control
  // at start, before it logs its args.
  node.setFailure('die-during-readiness');
  const running = runInPty(80, 24, [process.execPath, CLI, 'model', 'up', 'datagen', '--node', 'simA', '--auto-rollback'], { ...process.env, ...env, NO_COLOR: '1' }, { timeoutMs: 600_000 });
  try {
    await until('the failing server started', () => node.startShCalls().length > starts && logs().includes('non-default args'), 120_000);
  } finally {
    node.setFailure('none');
  }
  const r = await running;
  const screen = new TestTerminal(80).write(r.output).lines();
  const text = screen.join('\n');
  const flat = text.replace(/\s+/g, '');
  assert.equal(r.code, 7, text);
  assert.match(text, /auto-rollback: ok, best serves again/, text);
  const st = await savedNodeState(dir, 'simA');
  assert.equal(st.profile, 'best', 'the rollback serves best again');
  // The failed start's log, not the rollback's (the node state names the rollback's), and a command that reads it.
  const failedLog = /failedstart'slog:(\S+?pulse-up-\d{8}T\d{6}Z\.log)/.exec(flat)?.[1]; // a long path wraps at 80 columns
  assert.ok(failedLog, text);
  assert.notEqual(failedLog, st.logPath, "the failed start's log, not the rollback's");
  assert.ok(flat.includes(`pulsemodellogs--nodesimA--deploy${failedLog}`), text);
  // Its container's last lines, read before the rollback's stop removed that container (redacted on the node).
  assert.match(text, /last \d+ line\(s\) of the failed start's container log/, text);
  assert.ok(text.includes(DEATH), text);
  // The container the node runs now is the restored server: nobody is told to stop it.
  assert.doesNotMatch(text, /pulse model down --node simA|holds its memory until it stops/, text);
  assert.match(text, /container vllm-qwen38: running best again, started by the auto-rollback/, text);
  // Afterwards the failed start's log is still reachable by its path.
  const read = await runCli(['model', 'logs', '--node', 'simA', '--deploy', failedLog], env);
  assert.equal(read.code, 0, read.stdout + read.stderr);
  assert.ok(read.stderr.includes(`deploy start log ${failedLog}`), read.stderr);
  const refused = await runCli(['model', 'logs', '--node', 'simA', '--deploy', '/etc/passwd'], env);
  assert.equal(refused.code, 2, 'only a start log of the node: ' + refused.stderr);
});

test('then a plain rollback does not bring back the .env that failed: --list and the dry-run say what happened to each backup', async () => {
  const st = await savedNodeState(dir, 'simA');
  assert.equal(st.profile, 'best', 'the previous test left best restored');
  const list = await runCli(['model', 'rollback', '--node', 'simA', '--list', '--json'], env);
  assert.equal(list.code, 0, list.stdout + list.stderr);
  const entries = JSON.parse(list.stdout) as { name: string; path: string; profile: string | null; lastUpWrote: boolean; mark: string | null; failed: boolean }[];
  const failed = entries.find((e) => e.lastUpWrote);
  assert.ok(failed, list.stdout);
  assert.equal(failed.profile, 'datagen', 'the last up (the auto-rollback) backed up the failed datagen .env');
  assert.equal(failed.failed, true, list.stdout);
  assert.match(failed.mark ?? '', /^datagen: failed at readiness \d\d:\d\dZ, undone \d\d:\d\dZ \(best served again\)$/, list.stdout);
  const served = entries.find((e) => e.profile === 'best' && !e.failed);
  assert.ok(served, list.stdout);
  assert.match(served.mark ?? '', /^best: served \d\d:\d\dZ$/, list.stdout);
  const text = await runCli(['model', 'rollback', '--node', 'simA', '--list'], env);
  assert.ok(text.stdout.includes('the last up replaced this; datagen: failed at readiness'), text.stdout);
  // The default would be the backup the last up wrote: the .env that failed. Refused, saying which and why.
  const dry = await runCli(['model', 'rollback', '--node', 'simA', '--dry-run'], env);
  assert.equal(dry.code, 4, dry.stdout + dry.stderr);
  assert.ok(dry.stderr.includes(`the default backup, the .env the last up replaced (${failed.name}), holds an .env that failed (datagen: failed at readiness`), dry.stderr);
  assert.match(dry.stderr, /simA serves best, its last known good, now: there is nothing to roll back to/, dry.stderr);
  const real = await runCli(['model', 'rollback', '--node', 'simA'], env);
  assert.equal(real.code, 4, real.stdout + real.stderr);
  assert.equal((await savedNodeState(dir, 'simA')).workflowId, st.workflowId, 'nothing ran');
  // Named on purpose, a backup still restores; its dry-run says what happened to it.
  const named = await runCli(['model', 'rollback', '--node', 'simA', '--to', served.name, '--dry-run'], env);
  assert.equal(named.code, 0, named.stdout + named.stderr);
  assert.match(named.stdout, /^ {2}chosen: {3}named by --to \(best: served \d\d:\d\dZ\)$/m, named.stdout);
});
