/**
 * A failed deploy at 80x24, through the CLI in a pseudo-terminal on a simulated node and the embedded Temporal
 * server: the failure block (the container, its log's last lines, the backup, the way back) comes first and the
 * verdict with its cause last, so the screen the operator is left with says what failed and why. The verdict used to
 * come first, and the block under it (log lines wrap at 80 columns) pushed it and the ✗ line off a 24-row screen.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { CLI, runCli } from '../helpers/cli.js';
import { hasPty, runInPty } from '../helpers/pty.js';
import { TestTerminal } from '../helpers/term.js';
import { startSimCli, stopSimCli, type SimCli } from '../helpers/sim-cli.js';

let rig: SimCli | null = null;

before(async () => {
  rig = await startSimCli('pulse-verdict-last-', { nodes: ['simA'], readyDelayMs: 300 });
});
after(() => stopSimCli(rig?.sim ?? null, rig?.dir ?? ''));

test('a failed up at 80x24: the block first, then the cause and the verdict on the last rows of the screen', { skip: !hasPty && 'no python3 pty' }, async () => {
  const first = await runCli(['model', 'up', 'datagen', '--node', 'simA', '--yes'], rig!.env);
  assert.equal(first.code, 0, first.stdout + first.stderr);
  const node = rig!.sim.node('simA');
  node.setFailure('never-ready');
  let run;
  try {
    run = await runInPty(80, 24, [process.execPath, CLI, 'model', 'up', 'best', '--node', 'simA', '--yes', '--timeout-s', '3'], { ...process.env, ...rig!.env, NO_COLOR: '1' }, { timeoutMs: 600_000 });
  } finally {
    node.setFailure('none');
  }
  const all = new TestTerminal(80).write(run.output).lines();
  while (all.length > 0 && all.at(-1) === '') all.pop();
  const screen = all.slice(-23); // what a 24-row terminal shows when the command returns (the prompt takes the last row)
  const text = screen.join('\n');
  assert.equal(run.code, 8, text); // the readiness timeout
  const verdict = screen.findIndex((r) => /^up best on simA: FAILED at readiness \(cause above\), node failed$/.test(r));
  assert.ok(verdict >= 0, `the verdict is on the screen:\n${text}`);
  assert.ok(verdict >= screen.length - 2, `the verdict is last (a worker log line at most after it):\n${text}`);
  const cause = screen.findIndex((r) => r.startsWith('cause: readiness: '));
  assert.ok(cause >= 0 && cause < verdict && verdict - cause <= 4, `the cause right above the verdict:\n${text}`);
  // the block still comes, before them: the container, the log's last lines, the way back
  for (const line of [/^ {2}container vllm-qwen38: /m, /^ {2}to go back: pulse model rollback --node simA --to /m]) {
    const at = all.findIndex((r) => line.test(r));
    assert.ok(at >= 0 && at < all.length - screen.length + verdict, `${String(line)} before the verdict:\n${all.join('\n')}`);
  }
});
