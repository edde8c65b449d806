/**
 * Protected nodes against the real dev server, a real `pulse worker` and a simulated node: a hand-made plan sent
 * straight to the workflow (no CLI in front) is refused without --yes, for up and for down, and nothing at all
 * happens on the node (no script, no docker call, no request, no state change). With --yes the same plan runs.
 * The CLI-side refusals are proven elsewhere (see SECURITY.md).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { writeFileSync } from 'node:fs';
import { workflowIdFor } from '../../workflows/definitions.js';
import type { DownPlan, UpPlan } from '../../runtime/model/index.js';
import { runCli, startCli, waitForOutput } from '../helpers/cli.js';
import { startStack, type Stack } from '../helpers/stack.js';

let stack: Stack;

before(async () => {
  stack = await startStack({ nodes: ['guarded', 'open'], protected: ['guarded'], readyDelayMs: 200 });
  for (const n of stack.sim.nodes) writeFileSync(n.envPath, 'MAX_NUM_SEQS=2\n', { mode: 0o600 });
});
after(async () => {
  await stack?.stop();
});

function nodeActivity(node: string): string {
  const n = stack.sim.node(node);
  return JSON.stringify({ docker: n.dockerCalls().length, start: n.startShCalls().length, stop: n.stopShCalls().length, req: n.requests().length });
}

async function assertRefusedUntouched(plan: UpPlan | DownPlan): Promise<void> {
  const before = nodeActivity(plan.node);
  const statesBefore = await stack.stateFiles();
  const out = await stack.outcome(await stack.start(plan));
  assert.equal(out.status, 'refused', `${plan.action}: ${out.status} ${out.error ?? ''}`);
  assert.match(out.error ?? '', /protected/);
  assert.equal(nodeActivity(plan.node), before, 'nothing happened on the node');
  assert.deepEqual(await stack.stateFiles(), statesBefore, 'no state was written');
}

test('a hand-made up plan for a protected node without confirmed (--yes) is refused by the workflow itself', async () => {
  const plan = stack.planUp('guarded');
  assert.equal(plan.protected, true);
  assert.equal(plan.confirmed, false);
  await assertRefusedUntouched(plan);
});

test('a hand-made down plan for a protected node without --yes is refused by the workflow itself', async () => {
  await assertRefusedUntouched(stack.planDown('guarded', false));
});

test('the same plans with --yes run on the protected node (the refusal is the only thing in the way)', async () => {
  const up = await stack.outcome(await stack.start(stack.planUp('guarded', 'best', { yes: true })));
  assert.equal(up.status, 'succeeded', up.error ?? '');
  const down = await stack.outcome(await stack.start(stack.planDown('guarded', true)));
  assert.equal(down.status, 'succeeded', down.error ?? '');
});

test('cancel on a protected node refuses without --yes (exit 4, before Temporal), and cancels with it', async () => {
  const guarded = stack.sim.node('guarded');
  guarded.setReadyDelay(60_000); // the deploy waits in readiness, so there is something to cancel
  try {
    const h = await stack.start(stack.planUp('guarded', 'best', { yes: true, restart: true }));
    await waitUntilStep(h.workflowId, 'pollReadiness');
    const refused = await runCli(['model', 'cancel', '--node', 'guarded'], stack.env);
    assert.equal(refused.code, 4, refused.stdout + refused.stderr);
    assert.match(refused.stderr, /^pulse: node guarded is protected; add --yes to cancel the deploy on it$/m);
    assert.equal((await h.describe()).status.name, 'RUNNING', 'the refused cancel cancelled nothing');
    const ok = await runCli(['model', 'cancel', '--node', 'guarded', '--yes'], stack.env);
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    assert.equal((await stack.outcome(h)).status, 'failed-compensated');
  } finally {
    guarded.setReadyDelay(200);
  }
  // An unprotected node needs no --yes (the refusal is the protected flag's, not cancel's).
  const none = await runCli(['model', 'cancel', '--node', 'open'], stack.env);
  assert.match(none.stdout, /nothing to cancel: no deploy runs on open/);
});

test('a deploy cancelled before its preflight ends prints the node as it is (it still serves), never "node down"', async () => {
  const open = stack.sim.node('open');
  const first = await runCli(['model', 'up', 'datagen', '--node', 'open'], stack.env);
  assert.equal(first.code, 0, first.stdout + first.stderr);
  open.freezeDaemon(true, 120_000); // a frozen docker daemon (SIGSTOP): the preflight's docker calls hang
  try {
    const up = startCli(['model', 'up', 'best', '--node', 'open'], stack.env);
    await waitForOutput(up, /→ 1\/9 preflight on open/);
    await waitUntilStep(workflowIdFor('open'), 'runPreflight');
    const cancel = await runCli(['model', 'cancel', '--node', 'open'], stack.env);
    assert.equal(cancel.code, 0, cancel.stdout + cancel.stderr);
    open.freezeDaemon(false); // the daemon answers again (the cancelled preflight's calls were killed)
    const r = await up.done;
    assert.notEqual(r.code, 0);
    assert.doesNotMatch(r.stdout, /node down/, r.stdout);
    // In the full suite the frozen daemon sometimes did not hold the preflight (it ended in 1.7 s, then the cancel
    // landed in mkdir; run alone it holds): both are before the stop, and either way the node is printed as it is.
    const at = /up best on open: CANCELLED, node (unchanged|up): (preflight|mkdir): deploy cancelled by request/.exec(r.stdout);
    assert.ok(at, r.stdout);
    if (at[2] === 'preflight') assert.match(r.stdout, /pulse changed nothing on open: it still serves \(container \S+ running, profile datagen\)/, r.stdout);
    else assert.match(r.stdout, /container vllm-qwen38: still running/, r.stdout);
  } finally {
    open.freezeDaemon(false);
  }
});

async function waitUntilStep(workflowId: string, activity: string): Promise<void> {
  const h = stack.client.workflow.getHandle(workflowId);
  for (let i = 0; i < 600; i++) {
    const d = await h.describe();
    if ((d.raw.pendingActivities ?? []).some((p) => p.activityType?.name === activity && Number(p.state) === 2)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${activity} never started`);
}
