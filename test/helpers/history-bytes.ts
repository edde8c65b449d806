/**
 * What fills a workflow history: its protobuf-encoded size (as the server stores and replays it) and the bytes per
 * event type, activity events named by their activity. test/engine/history-size.test.ts bounds it; bench/history.ts
 * reports it.
 */
import proto from '@temporalio/proto';

const { temporal } = proto;
type History = proto.temporal.api.history.v1.IHistory;

/** The encoded size of a whole history. */
export function encodedBytes(history: History): number {
  return temporal.api.history.v1.History.encode(history).finish().length;
}

/** Events and bytes per event type (e.g. `ACTIVITY_TASK_SCHEDULED runPreflight`), largest first. */
export function bytesByEventType(history: History): { type: string; n: number; bytes: number }[] {
  const names = new Map<string, string>();
  const by = new Map<string, { n: number; bytes: number }>();
  for (const e of history.events ?? []) {
    const scheduled = e.activityTaskScheduledEventAttributes?.activityType?.name;
    if (scheduled) names.set(String(e.eventId), scheduled);
    const ref = e.activityTaskCompletedEventAttributes?.scheduledEventId ?? e.activityTaskStartedEventAttributes?.scheduledEventId;
    const activity = scheduled ?? (ref ? names.get(String(ref)) : undefined);
    const type = `${(temporal.api.enums.v1.EventType[e.eventType ?? 0] ?? String(e.eventType)).replace('EVENT_TYPE_', '')}${activity ? ` ${activity}` : ''}`;
    const cur = by.get(type) ?? { n: 0, bytes: 0 };
    cur.n += 1;
    cur.bytes += temporal.api.history.v1.HistoryEvent.encode(e).finish().length;
    by.set(type, cur);
  }
  return [...by.entries()].map(([type, v]) => ({ type, ...v })).sort((a, b) => b.bytes - a.bytes);
}
