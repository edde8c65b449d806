/**
 * Readiness detection lag: from the simulated vLLM's first 200 on /v1/models (whoever asked: start.sh's own poll
 * or pulse's) to the verify step starting (ActivityTaskStarted of verifyServer in the workflow history). The
 * server needs 2 s to listen, so the readiness wait really polls. Goal: <= 1 s.
 *
 * Run: npx tsc && node dist/worker/build-bundle.js && node dist/bench/readiness-lag.js [reps]
 */
import type { temporal } from '@temporalio/proto';
import { startStack } from '../test/helpers/stack.js';
import { median, printTable, round, runMain, writeResult } from './lib.js';

const REPS = Number(process.argv[2] ?? 5);
/** `partitions1`: the dev server with one task-queue partition (matching.numTaskqueue{Read,Write}Partitions=1). */
const ONE_PARTITION = process.argv[3] === 'partitions1';
type Event = temporal.api.history.v1.IHistoryEvent;

function eventMs(e: Event): number {
  const t = e.eventTime;
  return Number(t?.seconds ?? 0) * 1000 + Math.floor((t?.nanos ?? 0) / 1e6);
}

/** When the activity of `type` started (its ActivityTaskStarted event), in epoch ms. */
function activityStartedMs(events: Event[], type: string): number {
  const scheduled = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === type);
  if (!scheduled) throw new Error(`no ${type} in history`);
  const started = events.find((e) => Number(e.activityTaskStartedEventAttributes?.scheduledEventId ?? -1) === Number(scheduled.eventId));
  if (!started) throw new Error(`${type} never started`);
  return eventMs(started);
}

async function main(): Promise<void> {
  const serverArgs = ONE_PARTITION ? ['--dynamic-config-value', 'matching.numTaskqueueReadPartitions=1', '--dynamic-config-value', 'matching.numTaskqueueWritePartitions=1'] : undefined;
  const stack = await startStack({ nodes: ['simR'], readyDelayMs: 2000, memory: { recoverMs: 0 }, ...(serverArgs ? { serverArgs } : {}) });
  try {
    const rows = [];
    for (let rep = 0; rep < REPS; rep++) {
      const t0 = Date.now();
      const handle = await stack.start(stack.planUp('simR', 'best', { restart: true }));
      const out = await stack.outcome(handle);
      if (out.status !== 'succeeded') throw new Error(`deploy ${out.status}: ${out.error}`);
      const first200 = stack.sim
        .node('simR')
        .requests()
        .filter((r) => r.path === '/v1/models' && r.status === 200 && Date.parse(r.at) >= t0)
        .map((r) => Date.parse(r.at))
        .sort((a, b) => a - b)[0];
      if (first200 === undefined) throw new Error('no 200 seen by the sim');
      const events = (await handle.fetchHistory()).events ?? [];
      const verifyStart = activityStartedMs(events, 'verifyServer');
      rows.push({ rep: rep + 1, lagMs: verifyStart - first200, goal: '<= 1000 ms' });
    }
    const med = median(rows.map((r) => r.lagMs));
    const max = Math.max(...rows.map((r) => r.lagMs));
    printTable('readiness detection lag: first 200 at the server -> verify step started', [...rows, { rep: 'median', lagMs: med, goal: '<= 1000 ms' }, { rep: 'max', lagMs: max, goal: '' }]);
    writeResult(ONE_PARTITION ? 'readiness-lag-partitions1' : 'readiness-lag', {
      server: ONE_PARTITION ? 'dev server, one task-queue partition' : 'dev server defaults (4 task-queue partitions)', reps: REPS, poll: 'pulse probes once per second (activities pollIntervalMs 1000)', medianMs: round(med, 0), maxMs: round(max, 0), met: max <= 1000, samplesMs: rows.map((r) => r.lagMs) });
  } finally {
    await stack.stop();
  }
}

runMain(main);
