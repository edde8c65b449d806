/**
 * Worker presence: whether a live worker polls the pulse task queues, and how many deploys are open. The server
 * keeps a dead poller listed for minutes, so liveness is judged here (pid on this host, last poll elsewhere).
 */
import { buildPolls, pollerAlive, queuePollers, type QueueType } from '../../runtime/pollers.js';
import { GATEWAY_TASK_QUEUE, SA_NODE, TASK_QUEUE } from '../../workflows/definitions.js';
import type { PulseTemporal } from './temporal.js';

export { pollerAlive };

async function livePoller(t: PulseTemporal, name: string, type: QueueType): Promise<boolean> {
  return (await queuePollers(t.client.workflowService, t.target.namespace, name, type)).some((p) => pollerAlive(p));
}

/** Which pulse queues a live worker polls: the deploy queue (workflows) and the gateway queue (state activities). */
export async function queuesServed(t: PulseTemporal): Promise<{ deploy: boolean; gateway: boolean }> {
  const [deploy, gateway] = await Promise.all([livePoller(t, TASK_QUEUE, 'workflow'), livePoller(t, GATEWAY_TASK_QUEUE, 'activity')]);
  return { deploy, gateway };
}

/** True when live workers poll both pulse queues (a deploy can run to its end without this process). */
export async function workerPolls(t: PulseTemporal): Promise<boolean> {
  const q = await queuesServed(t);
  return q.deploy && q.gateway;
}

/** Number of unfinished pulse deploys (any node, but `except`: visibility may still show a just-closed one). */
export async function openDeploys(t: PulseTemporal, except?: string): Promise<number> {
  const not = except ? ` AND WorkflowId != '${except.replace(/'/g, '')}'` : '';
  const r = await t.client.workflow.count(`TaskQueue = '${TASK_QUEUE}' AND ExecutionStatus = 'Running'${not}`);
  return r.count;
}

/**
 * The nodes of the open pulse deploys, at most `limit`: visibility lists them, and each is described (visibility may
 * still list one that just closed) and named by its PulseNode search attribute, else its workflow ID.
 */
export async function openDeployNodes(t: PulseTemporal, limit = 5): Promise<string[]> {
  const nodes = new Set<string>();
  for await (const w of t.client.workflow.list({ query: `TaskQueue = '${TASK_QUEUE}' AND ExecutionStatus = 'Running'` })) {
    const d = await t.client.workflow.getHandle(w.workflowId, w.runId).describe();
    if (d.status.name === 'RUNNING') nodes.add(d.typedSearchAttributes.get(SA_NODE) ?? w.workflowId);
    if (nodes.size >= limit) break;
  }
  return [...nodes];
}

/** Number of watchdog schedules (`pulse model watchdog on`): their checks need a worker too. */
export async function watchdogSchedules(t: Pick<PulseTemporal, 'client'>): Promise<number> {
  const { watchdogScheduleId } = await import('../../runtime/fleet/watchdog.js');
  let n = 0;
  for await (const s of t.client.schedule.list()) if (s.scheduleId.startsWith(watchdogScheduleId(''))) n++;
  return n;
}

export const PINNED = 1; // temporal.api.enums.v1.VersioningBehavior.VERSIONING_BEHAVIOR_PINNED

/** The parts of a running deploy's description read here (a WorkflowExecutionDescription). */
export interface RunningLike {
  taskQueue: string;
  raw: { workflowExecutionInfo?: { versioningInfo?: { behavior?: unknown; deploymentVersion?: { buildId?: string | null } | null } | null } | null };
}

/**
 * Why no worker can run this deploy now, or null when one can: no live worker polls its task queue at all, or none
 * of the build it is pinned to (worker/versioning.ts). `status` names such a deploy.
 */
export async function unservedDeploy(t: Pick<PulseTemporal, 'client'> & { target: { namespace: string } }, d: RunningLike): Promise<string | null> {
  const pollers = await queuePollers(t.client.workflowService, t.target.namespace, d.taskQueue, 'workflow');
  if (!pollers.some((p) => pollerAlive(p))) return `no worker polls its task queue ${d.taskQueue}`;
  const v = d.raw.workflowExecutionInfo?.versioningInfo;
  const build = v?.deploymentVersion?.buildId;
  if (Number(v?.behavior) === PINNED && build && !buildPolls(pollers, build)) return `it is pinned to build ${build} and no worker of that build polls ${d.taskQueue}`;
  return null;
}
