/**
 * Worker presence: whether a live worker polls the pulse task queues, and how many deploys are open. The server
 * keeps a dead poller listed for minutes, so liveness is judged here (pid on this host, last poll elsewhere).
 */
import { pollerAlive, type PollerLike } from '../../runtime/pollers.js';
import { GATEWAY_TASK_QUEUE, TASK_QUEUE } from '../../workflows/definitions.js';
import type { PulseTemporal } from '../temporal.js';

export { pollerAlive };

async function livePoller(t: PulseTemporal, name: string, type: 1 | 2): Promise<boolean> {
  const res = await t.client.workflowService.describeTaskQueue({
    namespace: t.target.namespace,
    taskQueue: { name, kind: 1 }, // TASK_QUEUE_KIND_NORMAL
    taskQueueType: type, // 1 WORKFLOW, 2 ACTIVITY
  });
  return (res.pollers ?? []).some((p) => pollerAlive(p as PollerLike));
}

/** Which pulse queues a live worker polls: the deploy queue (workflows) and the gateway queue (state activities). */
export async function queuesServed(t: PulseTemporal): Promise<{ deploy: boolean; gateway: boolean }> {
  const [deploy, gateway] = await Promise.all([livePoller(t, TASK_QUEUE, 1), livePoller(t, GATEWAY_TASK_QUEUE, 2)]);
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
