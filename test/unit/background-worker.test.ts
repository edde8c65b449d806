/**
 * The background worker's record and its idle setting (cli/deploy-client/background-worker.ts): PULSE_WORKER_IDLE_S is checked,
 * and a worker.json whose pid now belongs to another program (pid reuse) is not taken for the worker.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { DEFAULT_IDLE_S, liveBackgroundWorker, stopBackgroundWorker, workerIdleS, workerInfoFile } from '../../cli/deploy-client/background-worker.js';
import { removeDir, tempDir } from '../helpers/cli.js';

test('PULSE_WORKER_IDLE_S: default 300, whole seconds from 1 to 86400, anything else a usage error', () => {
  assert.equal(workerIdleS({}), DEFAULT_IDLE_S);
  assert.equal(DEFAULT_IDLE_S, 300);
  assert.equal(workerIdleS({ PULSE_WORKER_IDLE_S: '' }), 300);
  assert.equal(workerIdleS({ PULSE_WORKER_IDLE_S: '2' }), 2);
  for (const bad of ['0', '-1', '1.5', 'soon', '86401']) {
    assert.throws(() => workerIdleS({ PULSE_WORKER_IDLE_S: bad }), (e: Error & { kind?: string }) => e.kind === 'usage' && /PULSE_WORKER_IDLE_S/.test(e.message), bad);
  }
});

test('a worker.json whose pid is another program (this test process) is no live worker, and stop leaves it alone', async () => {
  const dir = await tempDir('pulse-bgw-');
  try {
    await mkdir(path.join(dir, 'temporal'));
    await writeFile(workerInfoFile(dir), JSON.stringify({ pid: process.pid, buildId: 'x', serverPid: 1, nodesPath: '/n', logFile: '/l', startedAt: '' }));
    assert.equal(await liveBackgroundWorker(dir), null);
    assert.equal(await stopBackgroundWorker(dir), null);
    assert.equal(await liveBackgroundWorker(path.join(dir, 'none')), null, 'no record: none');
  } finally {
    await removeDir(dir);
  }
});
