/**
 * The watchdog's record activity (activities/watchdog.ts) without a server (MockActivityEnvironment): it judges a
 * check against the recorded deploy, keeps the streak, disables the endpoint after N, decides a heal (last known
 * good: the live .env), spends the budget and then marks the node failed; `clear` removes the record.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createActivities } from '../../activities/index.js';
import type { NodeState, WatchdogCheck, WatchdogOutcome, WatchdogRequest } from '../../runtime/model/index.js';
import { fakeDeps } from '../workflows/fake-deps.js';

const quiet = { logger: { log: () => undefined, trace: () => undefined, debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined } } as never;
const UP: NodeState = {
  node: 'spark2', state: 'up', action: 'up', profile: 'best', identity: { sha256: 'a'.repeat(64), profile: 'best', overlay: 'none' }, workflowId: 'w', runId: 'r',
  at: '2026-12-03T02:00:00Z', backupPath: null, logPath: null, kvCacheLine: null, maxModelLen: 262144, servedModelName: 'qwen38', overlayManifest: null,
  error: null, previousProfile: null,
  lastKnownGood: { profile: 'best', identity: { sha256: 'a'.repeat(64), profile: 'best', overlay: 'none' }, at: '2026-12-03T02:00:00Z', workflowId: 'w', backupPath: null },
};
const DEAD: WatchdogCheck = {
  node: 'spark2', answered: true, error: null, container: { name: 'vllm-qwen38', exists: true, running: false, state: 'exited', restartCount: 0, exitMeaning: 'exit 137' },
  http: false, httpSkipped: 'not checked: no container runs', httpStatus: null, healthOk: false, servedModels: [], maxModelLen: null, drift: false, envProfile: 'best', memoryWarning: null, locked: null,
};
const REQ: WatchdogRequest = { action: 'watchdog', version: 1, node: 'spark2', everyS: 2, after: 2, heal: true, healsPerHour: 1, confirmed: false };

test('record: down twice disables and heals once; the budget spent marks the node failed; clear removes the record', async () => {
  let t = Date.parse('2026-12-03T03:00:00Z');
  const { deps, mem } = fakeDeps({}, { clock: { now: () => t, monotonic: () => t } });
  mem.states.set('spark2', UP);
  const acts = createActivities(deps);
  const env = new MockActivityEnvironment({}, quiet);
  const once = async (): Promise<WatchdogOutcome> => {
    t += 2000;
    return env.run(acts.watchdogRecord, { request: REQ, check: DEAD });
  };
  const first = await once();
  assert.deepEqual(first.changed, { from: null, to: 'down' });
  assert.equal(first.heal, null);
  // history's row of the change: the streak against --after 2, not a bare "(1 in a row)" (issue 30 item 10)
  assert.match(first.summary, /^watchdog on spark2: new → down, down: .* \(1 of 2 failed checks before the endpoint is disabled\)$/);
  const second = await once();
  assert.equal(second.changed, null);
  assert.match(second.summary, /\(2 failed check\(s\) in a row: endpoint disabled\)$/);
  assert.match(second.record?.disabled ?? '', /^watchdog: 2 failed checks in a row/);
  assert.equal(second.heal?.backup, '/srv/recipes/flash/.env', 'last known good is the live .env');
  assert.equal(mem.states.get('spark2')?.watchdog?.healsTotal, 1);
  await once();
  const spent = await once();
  assert.equal(spent.heal, null);
  assert.match(spent.record?.gaveUp ?? '', /^heal budget spent: 1 heal\(s\) in the last hour \(at most 1\), still down: container vllm-qwen38 is exited/);
  assert.equal(mem.states.get('spark2')?.state, 'failed');
  assert.match(mem.states.get('spark2')?.error ?? '', /^watchdog: heal budget spent/);
  const cleared: WatchdogOutcome = await env.run(acts.watchdogRecord, { request: { ...REQ, clear: true as const }, check: null });
  assert.equal(cleared.record, null);
  assert.equal(mem.states.get('spark2')?.watchdog, undefined);
});

test('record: a request that names a node the worker does not know is refused', async () => {
  const { deps } = fakeDeps({});
  const env = new MockActivityEnvironment({}, quiet);
  const err = await env.run(createActivities(deps).watchdogRecord, { request: { ...REQ, node: 'nope' }, check: DEAD }).catch((e: unknown) => e);
  assert.match(String((err as Error).message), /node "nope" is not in the worker's nodes.json/);
});
