/**
 * Controller overhead: `up` through Temporal (real dev server, a separate `pulse worker`) against the floor of
 * running the same node scripts back to back over one ssh connection in one process, with no Temporal. The node
 * is instantly ready (vLLM listens at once, memory frees at once), so what remains is pulse's own cost.
 *
 * - same identity: steps 1, 7, 8, 9 (preflight, readiness, verify, publish state)
 * - full up (--restart): all nine steps
 *
 * Run: npx tsc && node dist/worker/build-bundle.js && node dist/bench/overhead.js [reps]
 */
import type { temporal } from '@temporalio/proto';
import { openSession } from '../runtime/node/connect.js';
import type { UpPlan } from '../runtime/model/index.js';
import { startStack, type Stack } from '../test/helpers/stack.js';
import { floorUp } from './floor.js';
import { median, printTable, round, runMain, timeMs, writeResult } from './lib.js';

const REPS = Number(process.argv[2] ?? 5);

type Event = temporal.api.history.v1.IHistoryEvent;
const ms = (e: Event | undefined): number => Number(e?.eventTime?.seconds ?? 0) * 1000 + Math.floor((e?.eventTime?.nanos ?? 0) / 1e6);

/**
 * Where a deploy's time went, from its history: in activities (started -> completed), waiting for a worker
 * (scheduled -> started), and between an activity's end and the next one's scheduling (the workflow task).
 */
function breakdown(events: Event[]): { activities: number; inActivitiesMs: number; dispatchMs: number; workflowTaskMs: number; perActivityMs: Record<string, number> } {
  const byId = new Map(events.map((e) => [Number(e.eventId), e]));
  const perActivityMs: Record<string, number> = {};
  let inActivitiesMs = 0;
  let dispatchMs = 0;
  let workflowTaskMs = 0;
  let activities = 0;
  let lastEnd: number | null = null;
  for (const e of events) {
    if (e.activityTaskScheduledEventAttributes && lastEnd !== null) workflowTaskMs += ms(e) - lastEnd;
    const c = e.activityTaskCompletedEventAttributes;
    if (!c) continue;
    const started = byId.get(Number(c.startedEventId));
    const scheduled = byId.get(Number(c.scheduledEventId));
    activities += 1;
    inActivitiesMs += ms(e) - ms(started);
    const type = scheduled?.activityTaskScheduledEventAttributes?.activityType?.name ?? '?';
    perActivityMs[type] = (perActivityMs[type] ?? 0) + ms(e) - ms(started);
    dispatchMs += ms(started) - ms(scheduled);
    lastEnd = ms(e);
  }
  return { activities, inActivitiesMs, dispatchMs, workflowTaskMs, perActivityMs };
}

let lastBreakdown: ReturnType<typeof breakdown> | null = null;

/** The medians of several ups' breakdowns, with the median time inside each activity type (started -> completed). */
function partsOf(parts: ReturnType<typeof breakdown>[]): Record<string, unknown> | null {
  if (parts.length === 0) return null;
  const med = (f: (p: ReturnType<typeof breakdown>) => number): number => round(median(parts.map(f)), 0);
  return {
    activities: parts[0]?.activities,
    inActivitiesMs: med((p) => p.inActivitiesMs),
    dispatchMs: med((p) => p.dispatchMs),
    workflowTaskMs: med((p) => p.workflowTaskMs),
    perActivityMs: Object.fromEntries(Object.keys(parts[0]?.perActivityMs ?? {}).map((k) => [k, med((p) => p.perActivityMs[k] ?? 0)])),
  };
}

async function temporalUp(stack: Stack, plan: UpPlan): Promise<void> {
  const handle = await stack.start(plan, { as: 'cli' });
  const out = await stack.outcome(handle);
  if (out.status !== 'succeeded') throw new Error(`deploy ${out.status}: ${out.error}`);
  lastBreakdown = breakdown((await handle.fetchHistory()).events ?? []);
}

async function main(): Promise<void> {
  const stack = await startStack({ nodes: ['simF', 'simT'], readyDelayMs: 0, memory: { recoverMs: 0 } });
  Object.assign(process.env, stack.env); // the floor's ssh resolves the sim aliases like the worker does
  try {
    // Warm both nodes up once (first container, first connection, JIT) so every measured rep is alike.
    await temporalUp(stack, stack.planUp('simT'));
    const session = await openSession(stack.planUp('simF').target);
    const fullParts: ReturnType<typeof breakdown>[] = [];
    const sameParts: ReturnType<typeof breakdown>[] = [];
    const times: Record<string, number[]> = { 'floor same': [], 'temporal same': [], 'floor full': [], 'floor full 1s poll': [], 'temporal full': [] };
    try {
      await floorUp(session, stack, stack.planUp('simF'), true, -1);
      for (let rep = 0; rep < REPS; rep++) {
        times['floor full']?.push((await timeMs(() => floorUp(session, stack, stack.planUp('simF', 'best', { restart: true }), true, rep))).ms);
        times['floor full 1s poll']?.push((await timeMs(() => floorUp(session, stack, stack.planUp('simF', 'best', { restart: true }), true, rep + 1000, 1000))).ms);
        times['temporal full']?.push((await timeMs(() => temporalUp(stack, stack.planUp('simT', 'best', { restart: true })))).ms);
        if (lastBreakdown) fullParts.push(lastBreakdown);
        times['floor same']?.push((await timeMs(() => floorUp(session, stack, stack.planUp('simF'), false, rep))).ms);
        times['temporal same']?.push((await timeMs(() => temporalUp(stack, stack.planUp('simT')))).ms);
        if (lastBreakdown) sameParts.push(lastBreakdown);
      }
    } finally {
      await session.close();
    }
    const m = (k: string): number => median(times[k] ?? []);
    const rows = [
      { path: 'same identity (steps 1,7,8,9)', floorMs: m('floor same'), temporalMs: m('temporal same'), ratio: m('temporal same') / m('floor same'), goal: '<= 1.05' },
      { path: 'full up (9 steps, --restart)', floorMs: m('floor full'), temporalMs: m('temporal full'), ratio: m('temporal full') / m('floor full'), goal: '<= 1.15' },
      // The same floor, but polling readiness once a second as pulse does: what remains is Temporal's own cost.
      { path: 'full up vs a floor that polls readiness every 1 s', floorMs: m('floor full 1s poll'), temporalMs: m('temporal full'), ratio: m('temporal full') / m('floor full 1s poll'), goal: '(diagnosis)' },
    ];
    printTable(`controller overhead: median of ${REPS} reps, instantly-ready simulated node`, rows);
    writeResult('overhead', {
      reps: REPS,
      rows: rows.map((r) => ({ ...r, floorMs: round(r.floorMs, 1), temporalMs: round(r.temporalMs, 1), ratio: round(r.ratio, 2), met: r.goal.startsWith('<= ') ? r.ratio <= Number(r.goal.slice(3)) : null })),
      // Median over the full (and the same-identity) ups of where their time went (history event times, ms).
      fullUpParts: partsOf(fullParts),
      sameIdentityParts: partsOf(sameParts),
      samplesMs: Object.fromEntries(Object.entries(times).map(([k, v]) => [k, v.map((x) => round(x, 1))])),
    });
  } finally {
    await stack.stop();
  }
}

runMain(main);
