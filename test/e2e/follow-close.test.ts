/**
 * The follow ends when the deploy closes, not at its next periodic read: the close wakes it (a long poll on the
 * server), so `pulse model up` exits as the deploy ends (issue 28 "Time": the CLI's wall against its node scripts).
 * The periodic read is set to 10 minutes here, so a follow that waits for it never ends within the test's bound.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { followRun } from '../../cli/deploy-client/follow-run.js';
import { ProgressPrinter } from '../../cli/progress-printer.js';
import type { FollowOutcome } from '../../cli/follow-outcome.js';
import { startStack, type Stack } from '../helpers/stack.js';

let stack: Stack;
before(async () => {
  stack = await startStack({ nodes: ['simC'], readyDelayMs: 0, memory: { recoverMs: 0 } });
});
after(async () => {
  await stack?.stop();
});

test('a follow whose periodic read is far off still ends when the deploy closes, with its result', async () => {
  const handle = await stack.start(stack.planUp('simC', 'best', { restart: true }), { as: 'cli' });
  const out = { text: '', write: (s: string) => (out.text += s) };
  const ac = new AbortController();
  let bound: NodeJS.Timeout | undefined;
  const stuck = new Promise<'stuck'>((resolve) => (bound = setTimeout(() => resolve('stuck'), 180_000)));
  try {
    const o = await Promise.race([followRun(stack.client, handle.workflowId, (await handle.describe()).runId, { printer: new ProgressPrinter(out), signal: ac.signal, pollMs: 600_000 }), stuck]);
    assert.notEqual(o, 'stuck', `the follow did not end with the deploy:\n${out.text}`);
    const closed = o as FollowOutcome;
    assert.equal(closed.kind, 'closed');
    assert.equal(closed.kind === 'closed' && closed.status, 'completed');
    assert.equal(closed.kind === 'closed' && closed.result?.ok, true);
  } finally {
    clearTimeout(bound);
    ac.abort(); // a follow still sleeping (the old code) returns at once
  }
});
