/**
 * Worker presence on a server whose task queues have 4 partitions (the server's default; the servers pulse starts or
 * configures run 1, an operator's own may not). DescribeTaskQueue of a queue's name answers for its root partition
 * only, so a worker whose polls sit on another partition is missing from that list; the presence check
 * (runtime/pollers.ts queuePollers, read by cli/deploy-client/presence.ts) asks every partition the server lists.
 *
 * Poll forwarding is off on this server (matching.forwarderMaxOutstandingPolls=0), so a poll stays on the partition
 * it reached and the test can see where each worker polls; with forwarding on, a child partition passes at most one
 * poll at a time up to the root, which hides the miss only some of the time (a CI run started a second worker).
 * Each worker polls with one poller, as `<pid>@<host>`: once killed it is dead by its pid, however long it stays listed.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import { queuesServed } from '../../cli/deploy-client/presence.js';
import { connectTemporal, type PulseTemporal } from '../../cli/deploy-client/temporal.js';
import { pollerAlive, QUEUE_TYPE, queuePollers, type QueueType } from '../../runtime/pollers.js';
import { WORKFLOW_BUNDLE_PATH } from '../../worker/versioning.js';
import { GATEWAY_TASK_QUEUE, TASK_QUEUE } from '../../workflows/definitions.js';
import { startDevServer, type DevServer } from '../helpers/dev-server.js';
import { REPO_ROOT } from '../helpers/paths.js';
import { until } from '../helpers/until.js';

let server: DevServer;
let t: PulseTemporal;
const children: ChildProcess[] = [];

before(async () => {
  server = await startDevServer({
    dynamicConfig: { 'matching.numTaskqueueReadPartitions': 4, 'matching.numTaskqueueWritePartitions': 4, 'matching.forwarderMaxOutstandingPolls': 0 },
  });
  t = await connectTemporal({ temporal: server.address }, {});
});

after(async () => {
  for (const c of children) c.kill('SIGKILL');
  await t?.close();
  await server?.stop();
});

/** A real SDK worker with one poller of `type` on `queue`, in a process of its own. */
function pollWorker(queue: string, type: QueueType): ChildProcess {
  const opts =
    type === 'workflow'
      ? `workflowBundle: { codePath: ${JSON.stringify(WORKFLOW_BUNDLE_PATH)} }, maxCachedWorkflows: 0, workflowTaskPollerBehavior: { type: 'simple-maximum', maximum: 1 }`
      : `activities: { noop: async () => 0 }, activityTaskPollerBehavior: { type: 'simple-maximum', maximum: 1 }`;
  const code = `import { NativeConnection, Worker } from '@temporalio/worker';
const connection = await NativeConnection.connect({ address: ${JSON.stringify(server.address)} });
const w = await Worker.create({ connection, taskQueue: ${JSON.stringify(queue)}, ${opts} });
await w.run();`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', code], { cwd: REPO_ROOT, stdio: 'ignore' });
  children.push(child);
  return child;
}

/** Which partitions list `identity` among their pollers, each asked by its own name (the ground truth). */
async function partitionsListing(queue: string, type: QueueType, identity: string): Promise<string[]> {
  const svc = t.client.workflowService;
  const parts = await svc.listTaskQueuePartitions({ namespace: 'default', taskQueue: { name: queue, kind: 1 } });
  const keys = (type === 'workflow' ? parts.workflowTaskQueuePartitions : parts.activityTaskQueuePartitions).map((p) => p.key ?? '');
  const found: string[] = [];
  for (const name of keys) {
    const d = await svc.describeTaskQueue({ namespace: 'default', taskQueue: { name, kind: 1 }, taskQueueType: QUEUE_TYPE[type] });
    if ((d.pollers ?? []).some((p) => p.identity === identity)) found.push(name);
  }
  return found;
}

/**
 * Starts workers one at a time until one polls a partition other than the root and not the root (each start: 3 in 4
 * that it does; 12 starts all landing on the root would be 1 in 16 million); the others are killed.
 */
async function workerOffRoot(queue: string, type: QueueType): Promise<{ identity: string; partitions: string[] }> {
  for (let i = 0; i < 12; i++) {
    const child = pollWorker(queue, type);
    const identity = `${child.pid}@${os.hostname()}`;
    let partitions: string[] = [];
    await until(`worker ${identity} polling ${queue}`, async () => (partitions = await partitionsListing(queue, type, identity)).length > 0, 60_000, {
      everyMs: 200,
      died: () => (child.exitCode !== null ? `worker ${identity} exited with ${child.exitCode}` : null),
    });
    if (!partitions.includes(queue)) return { identity, partitions };
    child.kill('SIGKILL');
  }
  throw new Error(`12 workers in a row polled the root partition of ${queue}`);
}

test('the server lists 4 partitions of each pulse queue, the root under the queue name', async () => {
  const parts = await t.client.workflowService.listTaskQueuePartitions({ namespace: 'default', taskQueue: { name: TASK_QUEUE, kind: 1 } });
  assert.deepEqual(
    parts.workflowTaskQueuePartitions.map((p) => p.key),
    [TASK_QUEUE, `/_sys/${TASK_QUEUE}/1`, `/_sys/${TASK_QUEUE}/2`, `/_sys/${TASK_QUEUE}/3`],
  );
});

for (const [queue, type] of [[GATEWAY_TASK_QUEUE, 'activity'], [TASK_QUEUE, 'workflow']] as const) {
  test(`a worker polling only a non-root partition of ${queue} (${type} polls) is found: the root's list misses it, the presence check does not`, async () => {
    const w = await workerOffRoot(queue, type);
    const root = await t.client.workflowService.describeTaskQueue({ namespace: 'default', taskQueue: { name: queue, kind: 1 }, taskQueueType: QUEUE_TYPE[type] });
    assert.ok(!(root.pollers ?? []).some((p) => p.identity === w.identity && pollerAlive(p)), `the root's own list should miss ${w.identity} (on ${w.partitions.join(', ')})`);
    const all = await queuePollers(t.client.workflowService, 'default', queue, type);
    assert.ok(all.some((p) => p.identity === w.identity && pollerAlive(p)), `queuePollers found ${all.map((p) => p.identity).join(', ') || 'nobody'}, not ${w.identity}`);
    const served = await queuesServed(t);
    assert.equal(type === 'activity' ? served.gateway : served.deploy, true, `presence: ${JSON.stringify(served)}`);
  });
}
