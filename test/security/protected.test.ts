/**
 * Protected nodes against the real dev server, a real `pulse worker` and a simulated node: a hand-made plan sent
 * straight to the workflow (no CLI in front) is refused without --yes, for up and for down, and nothing at all
 * happens on the node (no script, no docker call, no request, no state change). With --yes the same plan runs.
 * The CLI-side refusals are proven elsewhere (see SECURITY.md).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { DownPlan, UpPlan } from '../../workflows/types.js';
import { startStack, type Stack } from '../faults/stack.js';

let stack: Stack;

before(async () => {
  stack = await startStack({ nodes: ['guarded', 'open'], protected: ['guarded'], readyDelayMs: 200 });
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
