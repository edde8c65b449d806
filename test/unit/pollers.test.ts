/**
 * runtime/pollers.ts queuePollers when the server will not list a queue's partitions (a refused permission, a
 * frontend without the call): it falls back to the root partition, DescribeTaskQueue of the queue's name. No server
 * here refuses the call, so this one case takes a stand-in service; test/e2e/partitions.test.ts runs the real one.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { queuePollers, type PollerService } from '../../runtime/pollers.js';

test('a server that refuses ListTaskQueuePartitions: the root partition is described, and its pollers come back', async () => {
  const asked: string[] = [];
  const svc: PollerService = {
    listTaskQueuePartitions: () => Promise.reject(Object.assign(new Error('PermissionDenied'), { code: 7 })),
    describeTaskQueue: (req) => {
      asked.push(`${req.taskQueue.name}/${req.taskQueueType}`);
      return Promise.resolve({ pollers: [{ identity: '1@elsewhere', lastAccessTime: { seconds: Math.floor(Date.now() / 1000) } }] });
    },
  };
  const pollers = await queuePollers(svc, 'default', 'pulse-gateway', 'activity');
  assert.deepEqual(asked, ['pulse-gateway/2']);
  assert.deepEqual(pollers.map((p) => p.identity), ['1@elsewhere']);
});

test('a server that lists partitions: each is described once, the root first, and their pollers are joined', async () => {
  const asked: string[] = [];
  const svc: PollerService = {
    listTaskQueuePartitions: () =>
      Promise.resolve({ workflowTaskQueuePartitions: [{ key: '/_sys/q/1' }, { key: 'q' }], activityTaskQueuePartitions: [{ key: 'q' }, { key: '/_sys/q/7' }] }),
    describeTaskQueue: (req) => {
      asked.push(req.taskQueue.name);
      return Promise.resolve({ pollers: [{ identity: `on ${req.taskQueue.name}` }] });
    },
  };
  const pollers = await queuePollers(svc, 'default', 'q', 'workflow');
  assert.deepEqual(asked, ['q', '/_sys/q/1']);
  assert.deepEqual(pollers.map((p) => p.identity), ['on q', 'on /_sys/q/1']);
});
