/**
 * History size: the protobuf-encoded workflow history of one full up (`best --restart`) and one same-identity up on
 * a simulated node, as the Temporal server stores and replays it, with the bytes per event type (the largest first).
 * test/engine/history-size.test.ts bounds the full up's figure; this row puts it beside the other issue 17 figures.
 *
 * Run: npx tsc && node dist/worker/build-bundle.js && node dist/bench/history.js (results: bench/results/history.json)
 */
import proto from '@temporalio/proto';
import { startStack } from '../test/helpers/stack.js';
import { printTable, round, runMain, writeResult } from './lib.js';

const { temporal } = proto;
type Event = proto.temporal.api.history.v1.IHistoryEvent;
/** Issue 17 (with issue 11): a full up's history at most 16 KB. */
const GOAL_BYTES = 16 * 1024;

/** Bytes per event type (scheduled/completed activity events named by their activity), largest first. */
function byType(events: Event[]): Record<string, number> {
  const names = new Map<string, string>();
  const by: Record<string, number> = {};
  for (const e of events) {
    const scheduled = e.activityTaskScheduledEventAttributes?.activityType?.name;
    if (scheduled) names.set(String(e.eventId), scheduled);
    const ref = e.activityTaskCompletedEventAttributes?.scheduledEventId ?? e.activityTaskStartedEventAttributes?.scheduledEventId;
    const activity = scheduled ?? (ref ? names.get(String(ref)) : undefined);
    const type = `${(temporal.api.enums.v1.EventType[e.eventType ?? 0] ?? String(e.eventType)).replace('EVENT_TYPE_', '')}${activity ? ` ${activity}` : ''}`;
    by[type] = (by[type] ?? 0) + temporal.api.history.v1.HistoryEvent.encode(e).finish().length;
  }
  return Object.fromEntries(Object.entries(by).sort((a, b) => b[1] - a[1]));
}

async function main(): Promise<void> {
  const stack = await startStack({ nodes: ['simH'], readyDelayMs: 0, memory: { recoverMs: 0 } });
  try {
    const rows = [];
    const parts: Record<string, Record<string, number>> = {};
    for (const [what, restart] of [['full up (best --restart)', true], ['same identity (best)', false]] as const) {
      const handle = await stack.start(stack.planUp('simH', 'best', { restart }), { as: 'cli' });
      const out = await stack.outcome(handle);
      if (out.status !== 'succeeded') throw new Error(`deploy ${out.status}: ${out.error}`);
      const history = await handle.fetchHistory();
      const bytes = temporal.api.history.v1.History.encode(history).finish().length;
      parts[what] = byType(history.events ?? []);
      rows.push({ what, bytes, kib: round(bytes / 1024, 1), events: history.events?.length ?? 0, goal: restart ? `<= ${GOAL_BYTES} B` : '-' });
    }
    printTable('workflow history of one up (protobuf-encoded, as the server stores it)', rows);
    const full = rows[0];
    writeResult('history', { goalBytes: GOAL_BYTES, rows, met: full ? full.bytes <= GOAL_BYTES : false, bytesByEventType: parts });
  } finally {
    await stack.stop();
  }
}

runMain(main);
