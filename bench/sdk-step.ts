/**
 * What one step costs Temporal itself, without pulse: a bare workflow of 13 no-op activities in a row (as many as a
 * full up schedules) on a dev server started as the benchmarks start theirs, one SDK Worker, the same SDK. From
 * the histories, as overhead.js splits a pulse up: the workflow task between two activities (one's completion to
 * the next one's scheduling), the activity's dispatch (scheduled to started), the first workflow task and the
 * client's start and result. With the latest overhead.json (the same run under bench/speed.sh), it also says how
 * far pulse's own per-step cost is from this floor, and the least ratio to its floor an up with one activity per
 * step can have on this machine: the scripts' floor plus its steps times the SDK's cost of a step.
 *
 * Run: npx tsc && node dist/bench/sdk-step.js [reps] (results: bench/results/sdk-step.json)
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { bundleWorkflowCode, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { startDevServer } from '../test/helpers/dev-server.js';
import { median, printTable, ROOT, round, runMain, timeMs, writeResult } from './lib.js';

const REPS = Number(process.argv[2] ?? 10);
/** A full up's activities: check, lock, preflight, mkdir, stop, memory, writeEnv, starting, start, readiness, verify, publish, release. */
const STEPS = 13;

type Event = temporal.api.history.v1.IHistoryEvent;
const ms = (e: Event | undefined): number => Number(e?.eventTime?.seconds ?? 0) * 1000 + Math.floor((e?.eventTime?.nanos ?? 0) / 1e6);

interface Split {
  /** Median of the workflow tasks between two activities (ms). */
  betweenMs: number;
  /** Median of the dispatches (scheduled → started, ms). */
  dispatchMs: number;
  /** WorkflowExecutionStarted → the first activity scheduled (ms). */
  firstTaskMs: number;
  /** The last activity's completion → WorkflowExecutionCompleted (ms). */
  lastTaskMs: number;
}

function split(events: Event[]): Split {
  const between: number[] = [];
  const dispatch: number[] = [];
  let lastEnd: number | null = null;
  let firstScheduled: number | null = null;
  const scheduledAt = new Map<number, number>();
  for (const e of events) {
    if (e.activityTaskScheduledEventAttributes) {
      scheduledAt.set(Number(e.eventId), ms(e));
      firstScheduled ??= ms(e);
      if (lastEnd !== null) between.push(ms(e) - lastEnd);
    }
    const s = e.activityTaskStartedEventAttributes;
    if (s) dispatch.push(ms(e) - (scheduledAt.get(Number(s.scheduledEventId)) ?? ms(e)));
    if (e.activityTaskCompletedEventAttributes) lastEnd = ms(e);
  }
  return { betweenMs: median(between), dispatchMs: median(dispatch), firstTaskMs: (firstScheduled ?? 0) - ms(events[0]), lastTaskMs: ms(events.at(-1)) - (lastEnd ?? 0) };
}

/** Pulse's full up from the latest overhead.json, if any: its floor and its per-step split. */
function pulseOverhead(): { floorMs: number; temporalMs: number; perStepMs: number; activities: number; run: unknown } | null {
  const f = path.join(ROOT, 'bench', 'results', 'overhead.json');
  if (!existsSync(f)) return null;
  const o = JSON.parse(readFileSync(f, 'utf8')) as { run?: unknown; rows?: { path: string; floorMs: number; temporalMs: number }[]; fullUpParts?: { activities: number; dispatchMs: number; workflowTaskMs: number } };
  const row = o.rows?.find((r) => r.path.startsWith('full up (9'));
  const p = o.fullUpParts;
  if (!row || !p) return null;
  return { floorMs: row.floorMs, temporalMs: row.temporalMs, perStepMs: (p.workflowTaskMs + p.dispatchMs) / (p.activities - 1), activities: p.activities, run: o.run ?? null };
}

async function main(): Promise<void> {
  Runtime.install({ logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} } as never });
  const server = await startDevServer();
  try {
    const workflowsPath = path.join(path.dirname(fileURLToPath(import.meta.url)), 'sdk-step-workflow.js');
    const bundle = await bundleWorkflowCode({ workflowsPath, logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} } as never });
    const nc = await NativeConnection.connect({ address: server.address });
    const worker = await Worker.create({ connection: nc, namespace: server.namespace, taskQueue: 'sdk-step', workflowBundle: bundle, activities: { noop: async (i: number) => i } });
    const client = new Client({ connection: await Connection.connect({ address: server.address }), namespace: server.namespace });
    const splits: Split[] = [];
    const walls: number[] = [];
    await worker.runUntil(async () => {
      for (let rep = -1; rep < REPS; rep++) {
        const { ms: wall, value: handle } = await timeMs(async () => {
          const h = await client.workflow.start('sdkSteps', { taskQueue: 'sdk-step', workflowId: `sdk-step-${rep}-${Date.now()}`, args: [STEPS] });
          await h.result();
          return h;
        });
        if (rep < 0) continue; // the first one warms the worker up (its first workflow task loads the bundle)
        walls.push(wall);
        splits.push(split((await handle.fetchHistory()).events ?? []));
      }
    });
    await nc.close();
    const med = (f: (s: Split) => number): number => round(median(splits.map(f)), 1);
    const perStep = med((s) => s.betweenMs) + med((s) => s.dispatchMs);
    const rows: Record<string, string | number | null>[] = [
      { what: `bare SDK: ${STEPS} no-op activities, wall (client start → result)`, ms: round(median(walls), 1) },
      { what: 'bare SDK: workflow task between two activities (median)', ms: med((s) => s.betweenMs) },
      { what: 'bare SDK: activity dispatch, scheduled → started (median)', ms: med((s) => s.dispatchMs) },
      { what: 'bare SDK: first workflow task, started → first activity', ms: med((s) => s.firstTaskMs) },
      { what: 'bare SDK: last activity → workflow completed', ms: med((s) => s.lastTaskMs) },
    ];
    const pulse = pulseOverhead();
    let least: number | null = null;
    if (pulse) {
      rows.push({ what: `pulse full up (overhead.json): workflow task + dispatch per step`, ms: round(pulse.perStepMs, 1) });
      // The least an up with one activity per step costs: the floor's scripts, plus each step's workflow task and dispatch.
      least = (pulse.floorMs + (pulse.activities - 1) * perStep) / pulse.floorMs;
      rows.push({ what: `least ratio of a full up of ${pulse.activities} activities (floor ${pulse.floorMs} ms + ${pulse.activities - 1} × ${round(perStep, 1)} ms)`, ms: null, ratio: round(least, 3) });
      rows.push({ what: 'pulse full up ratio measured (overhead.json)', ms: null, ratio: round(pulse.temporalMs / pulse.floorMs, 3) });
    }
    printTable(`what one step costs Temporal itself (median of ${REPS} workflows of ${STEPS} activities)`, rows);
    writeResult('sdk-step', {
      reps: REPS,
      steps: STEPS,
      wallMs: round(median(walls), 1),
      betweenMs: med((s) => s.betweenMs),
      dispatchMs: med((s) => s.dispatchMs),
      firstTaskMs: med((s) => s.firstTaskMs),
      lastTaskMs: med((s) => s.lastTaskMs),
      perStepMs: round(perStep, 1),
      pulse: pulse ? { ...pulse, perStepMs: round(pulse.perStepMs, 1), leastFullUpRatio: least === null ? null : round(least, 3) } : null,
      rows,
    });
  } finally {
    await server.stop();
  }
}

runMain(main);
