/**
 * A full state disk (issue 10 item 7): $PULSE_STATE_DIR on a tiny tmpfs, filled. The CLI says which dir has no
 * space left in one line instead of Temporal's `Failed to start Workflow`, and a deploy whose state write fails
 * on ENOSPC names the disk problem on the operator's screen (the progress line and the failure) instead of
 * retrying silently. Real CLI, `pulse worker`, dev server, simulated sshd nodes.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { killEmbeddedServerOnExit, removeDir, runCli, simCliEnv, tempDir } from '../helpers/cli.js';
import { stopEmbeddedServer } from '../../cli/deploy-client/embedded-server.js';
import { startStack, type Stack } from '../helpers/stack.js';

let stack: Stack;
let mounted: string[] = [];

/** A tmpfs of `size` at `dir` (we are root), then filled until no byte is left. */
function fullDisk(dir: string, size = '2m'): void {
  mkdirSync(dir, { recursive: true });
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0700`, 'tmpfs', dir]);
  mounted.push(dir);
}
function fill(dir: string): void {
  spawnSync('dd', ['if=/dev/zero', `of=${path.join(dir, 'filler')}`, 'bs=4k'], { stdio: 'ignore' });
  for (let i = 0; i < 64; i++) {
    try {
      writeFileSync(path.join(dir, `f${i}`), 'x');
    } catch {
      break;
    }
  }
}

before(async () => {
  stack = await startStack({ nodes: ['simA'], readyDelayMs: 200 });
});
after(async () => {
  await stack?.stop();
  for (const d of mounted.reverse()) spawnSync('umount', ['-l', d]);
  mounted = [];
});

test('up and down on a full state disk: one line naming the dir and "no space left", nothing started', async () => {
  fullDisk(stack.stateDir);
  fill(stack.stateDir);
  const runs = (await stack.allRuns()).length;
  const calls = stack.sim.node('simA').stopShCalls().length;
  for (const args of [['model', 'up', 'best', '--node', 'simA'], ['model', 'down', '--node', 'simA']]) {
    const r = await runCli(args, stack.env);
    assert.equal(r.code, 5, r.stdout + r.stderr);
    const first = r.stderr.split('\n')[0] ?? '';
    assert.match(first, new RegExp(`^pulse: cannot start (up best|down) on simA: state dir ${stack.stateDir}: no space left on device`));
    assert.doesNotMatch(r.stdout + r.stderr, /Failed to start Workflow/);
  }
  assert.equal((await stack.allRuns()).length, runs, 'no workflow was started');
  assert.equal(stack.sim.node('simA').stopShCalls().length, calls, 'nothing ran on the node');
});

test('a deploy whose state write hits ENOSPC shows the disk problem on the progress line and in the failure', async () => {
  // The disk fills after the CLI's check (here: before the worker's first state write): start like --detach.
  const handle = await stack.start(stack.planUp('simA', 'best'));
  const watch = await runCli(['model', 'watch', '--node', 'simA'], stack.env);
  const out = watch.stdout + watch.stderr;
  assert.match(out, new RegExp(`! state starting on simA: attempt \\d+ after: state disk full: no space left on device in ${stack.stateDir}`), out);
  assert.doesNotMatch(out, /StartToClose timeout/, 'no attempt stalled on a lock left by the full disk');
  const o = await stack.outcome(handle);
  assert.notEqual(o.status, 'succeeded');
  assert.match(String(o.error), /state disk full: no space left on device/);
});

test('with space again, the next deploy writes its state: the full disk left no lock behind', async () => {
  for (const d of mounted.reverse()) spawnSync('umount', ['-l', d]);
  mounted = [];
  const up = await runCli(['model', 'up', 'best', '--node', 'simA'], stack.env);
  assert.equal(up.code, 0, up.stdout + up.stderr);
});

test('the embedded server on a full state disk: one line naming the dir, not `Failed to start Workflow`', async () => {
  const dir = await tempDir('pulse-disk-embedded-');
  const env = await simCliEnv(stack.sim, dir);
  const state = String(env['PULSE_STATE_DIR']);
  fullDisk(state, '256m');
  killEmbeddedServerOnExit(state);
  try {
    // The embedded server starts (its SQLite on the state disk) and takes a deploy; then the disk fills.
    const first = await runCli(['model', 'down', '--node', 'simA', '--detach'], env);
    assert.equal(first.code, 0, first.stdout + first.stderr);
    fill(state);
    const r = await runCli(['model', 'up', 'best', '--node', 'simA', '--detach'], env);
    assert.equal(r.code, 5, r.stdout + r.stderr);
    assert.match(r.stderr.split('\n')[0] ?? '', new RegExp(`^pulse: cannot start up best on simA: state dir ${state}: no space left on device`));
    assert.doesNotMatch(r.stdout + r.stderr, /Failed to start Workflow/);
  } finally {
    await stopEmbeddedServer(state).catch(() => false);
    spawnSync('umount', ['-l', state]);
    mounted = mounted.filter((d) => d !== state);
    await removeDir(dir);
  }
});
