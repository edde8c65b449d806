/**
 * Crash recovery: SIGKILL the `pulse worker` running the readiness wait while a standby worker polls, and time
 * how long until the standby runs the poll again (the readiness activity's next attempt is STARTED in the
 * server's pending-activity view). Goal (issue 17): <= 8 s, and zero extra start.sh runs: the deploy still ends
 * succeeded with exactly one start.sh on the node. `recovery.js N SIGTERM` sends SIGTERM instead (a graceful
 * shutdown, which hands the wait back at once): results in recovery-sigterm.json.
 *
 * Run: npx tsc && node dist/worker/build-bundle.js && node dist/bench/recovery.js [reps] [SIGKILL|SIGTERM]
 */
import { WAIT_HEARTBEAT_TIMEOUT_S } from '../workflows/options.js';
import { startStack, type Stack } from '../test/helpers/stack.js';
import type { WorkflowHandle } from '@temporalio/client';
import { median, printTable, round, runMain, writeResult } from './lib.js';

const REPS = Number(process.argv[2] ?? 1);
const SIGNAL = process.argv[3] === 'SIGTERM' ? 'SIGTERM' : 'SIGKILL';
const GOAL_S = 8;

interface Pending {
  type: string;
  state: number;
  attempt: number;
}

async function pending(handle: WorkflowHandle): Promise<Pending[]> {
  const d = await handle.describe();
  return (d.raw.pendingActivities ?? []).map((p) => ({ type: p.activityType?.name ?? '', state: Number(p.state ?? 0), attempt: p.attempt ?? 0 }));
}

async function waitFor(what: string, limitMs: number, cond: () => Promise<boolean>): Promise<number> {
  const deadline = Date.now() + limitMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return Date.now();
}

const STARTED = 2; // PENDING_ACTIVITY_STATE_STARTED

async function once(stack: Stack, rep: number): Promise<{ resumeS: number; startShRuns: number; outcome: string }> {
  const node = stack.sim.node('simK');
  node.setReadyDelay(60_000);
  const before = node.startShCalls().length;
  const handle = await stack.start(stack.planUp('simK', 'best', { restart: true }), { as: 'cli' });
  await waitFor('the readiness poll', 60_000, async () => (await pending(handle)).some((p) => p.type === 'pollReadiness' && p.state === STARTED));
  await new Promise((r) => setTimeout(r, 2000)); // a few polls in
  const victim = stack.workers.at(-1);
  if (!victim) throw new Error('no worker');
  // A standby worker polls before the signal (started now, once the wait runs on the victim): what is measured is
  // pulse's part, the heartbeat timeout and retry (SIGKILL) or the hand-back (SIGTERM), not how long a loaded
  // machine takes to start a worker process (3.5-16.5 s at load 16 when it was started after the kill).
  await stack.startWorker();
  const killedAt = Date.now();
  const gone = victim.kill(SIGNAL);
  const resumedAt = await waitFor('the poll on the new worker', 120_000, async () => (await pending(handle)).some((p) => p.type === 'pollReadiness' && p.state === STARTED && p.attempt >= 2));
  await gone;
  node.setReadyDelay(0); // let it become ready now (the running container keeps its own delay; restart not needed)
  const out = await stack.outcome(handle);
  process.stdout.write(`rep ${rep + 1}: resumed after ${round((resumedAt - killedAt) / 1000, 1)} s, ${out.status}\n`);
  return { resumeS: (resumedAt - killedAt) / 1000, startShRuns: node.startShCalls().length - before, outcome: out.status };
}

async function main(): Promise<void> {
  const stack = await startStack({ nodes: ['simK'], readyDelayMs: 0, memory: { recoverMs: 0 } });
  try {
    const rows = [];
    for (let rep = 0; rep < REPS; rep++) rows.push({ rep: rep + 1, ...(await once(stack, rep)) });
    const goal = GOAL_S;
    printTable(`crash recovery: worker ${SIGNAL} during readiness -> poll running on a new worker (goal <= ${goal} s)`, rows);
    writeResult(SIGNAL === 'SIGKILL' ? 'recovery' : 'recovery-sigterm', {
      signal: SIGNAL,
      heartbeatTimeoutS: WAIT_HEARTBEAT_TIMEOUT_S,
      goalS: goal,
      standbyWorker: true,
      rows: rows.map((r) => ({ ...r, resumeS: round(r.resumeS, 1) })),
      medianResumeS: round(median(rows.map((r) => r.resumeS)), 1),
      met: rows.every((r) => r.resumeS <= goal && r.startShRuns === 1 && r.outcome === 'succeeded'),
    });
  } finally {
    await stack.stop();
  }
}

runMain(main);
