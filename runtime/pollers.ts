/**
 * Which workers poll a Temporal task queue, which of them are alive, and of which build. The one home of that
 * question: the CLI's worker presence, a deploy's pinned-build check and a starting worker's promotion decision all
 * ask it here.
 *
 * A task queue has partitions (the server's default is 4; pulse's own servers run 1), and DescribeTaskQueue
 * answers for the one partition it names: a worker whose polls sit on the others can be missing from the root's
 * list (a CI run started a second worker that way). So the list is the union over every partition the server
 * names (ListTaskQueuePartitions), as `temporal task-queue describe --partitions-legacy` reads them. The server keeps
 * a dead poller listed for minutes, so a worker on this host (SDK identity `<pid>@<host>`) is judged by its pid,
 * others by their last poll.
 */
import os from 'node:os';
import { pidAlive } from './state/pid.js';

/** The fields of a Temporal PollerInfo read here. */
export interface PollerLike {
  identity?: string | null;
  lastAccessTime?: { seconds?: number | { toNumber(): number } | null } | null;
  /** Set for versioned workers (worker/versioning.ts): the build they poll as. */
  deploymentOptions?: { buildId?: string | null } | null;
}

const REMOTE_POLLER_FRESH_S = 90; // a live worker re-polls within the server's ~70 s long-poll timeout

/** Whether a poller the server remembers is still alive. */
export function pollerAlive(p: PollerLike, nowMs = Date.now(), host = os.hostname()): boolean {
  const m = /^(\d+)@(.+)$/.exec(p.identity ?? '');
  if (m && m[2] === host) return pidAlive(Number(m[1]));
  const s = p.lastAccessTime?.seconds;
  const sec = s && typeof s === 'object' ? s.toNumber() : Number(s ?? 0);
  return nowMs / 1000 - sec < REMOTE_POLLER_FRESH_S;
}

/** Whether a live poller of this build is among `pollers`. */
export function buildPolls(pollers: readonly PollerLike[], buildId: string): boolean {
  return pollers.some((p) => p.deploymentOptions?.buildId === buildId && pollerAlive(p));
}

/** NORMAL task queue kind; the task types of temporal.api.enums.v1.TaskQueueType. */
const KIND_NORMAL = 1;
export const QUEUE_TYPE = { workflow: 1, activity: 2 } as const;
export type QueueType = keyof typeof QUEUE_TYPE;

interface QueueRef {
  namespace: string;
  taskQueue: { name: string; kind: number };
}

/** The two calls of Temporal's WorkflowService read here (structural: runtime never imports @temporalio). */
export interface PollerService {
  listTaskQueuePartitions(req: QueueRef): Promise<{
    workflowTaskQueuePartitions?: readonly { key?: string | null }[] | null;
    activityTaskQueuePartitions?: readonly { key?: string | null }[] | null;
  }>;
  describeTaskQueue(req: QueueRef & { taskQueueType: number }): Promise<{ pollers?: readonly PollerLike[] | null }>;
}

/**
 * The partitions of `queue` for `type`, root first. A server that will not list them (a permission, an old or
 * trimmed frontend) leaves the root alone: what DescribeTaskQueue of the queue's name has always answered.
 */
async function partitionKeys(svc: PollerService, namespace: string, queue: string, type: QueueType): Promise<string[]> {
  try {
    const r = await svc.listTaskQueuePartitions({ namespace, taskQueue: { name: queue, kind: KIND_NORMAL } });
    const parts = type === 'workflow' ? r.workflowTaskQueuePartitions : r.activityTaskQueuePartitions;
    const keys = (parts ?? []).flatMap((p) => (p.key ? [p.key] : []));
    return [queue, ...keys.filter((k) => k !== queue)];
  } catch {
    return [queue];
  }
}

/** Every poller the server lists on any partition of `queue` (a worker on several partitions is listed once per partition). */
export async function queuePollers(svc: PollerService, namespace: string, queue: string, type: QueueType): Promise<PollerLike[]> {
  const keys = await partitionKeys(svc, namespace, queue, type);
  const lists = await Promise.all(
    keys.map(async (name) => (await svc.describeTaskQueue({ namespace, taskQueue: { name, kind: KIND_NORMAL }, taskQueueType: QUEUE_TYPE[type] })).pollers ?? []),
  );
  return lists.flat();
}
