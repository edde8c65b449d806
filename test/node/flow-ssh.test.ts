import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openSession } from '../../runtime/node/connect.js';
import type { NodeSession } from '../../runtime/node/types.js';
import {
  makeDirs, probeReadiness, runPreflight, sampleMemory, startServer, stopServer, verifyServer, writeEnv,
} from '../../runtime/steps/index.js';
import { harness, until } from './helpers.js';
import type { Harness } from './helpers.js';

let h: Harness;
let s: NodeSession;

before(async () => {
  h = await harness(['spark2']);
  s = await openSession({ name: 'spark2', host: 'ssh', ssh: 'spark2' });
});
after(async () => {
  await s?.close();
  await h?.stop();
});

test('a full up over ssh: preflight, mkdir, stop, memory, write-env, start, readiness, verify', async () => {
  const plan = h.plan('spark2', 'best');
  const pre = await runPreflight(s, plan);
  assert.equal(pre.ok, true, JSON.stringify(pre.checks.filter((c) => !c.ok)));
  assert.equal(pre.currentIdentity, null);
  assert.equal(pre.sameIdentityRunning, false);
  await makeDirs(s, plan);
  const stop = await stopServer(s, plan.recipe);
  assert.equal(stop.containerGone, true);
  const mem = await sampleMemory(s, plan.memory.gateGiB);
  assert.ok(mem.memAvailableGiB >= 100, String(mem.memAvailableGiB));
  const w = await writeEnv(s, plan);
  assert.equal(w.written, true);
  const st = await startServer(s, plan, 'deploy-1');
  assert.equal(st.started, true);
  const ready = await until(() => probeReadiness(s, plan), (r) => r.ready);
  assert.equal(ready.ready, true, ready.detail);
  const v = await verifyServer(s, plan, st.logPath);
  assert.equal(v.ok, true, v.problems.join('; '));
  assert.equal(v.servedModelName, plan.expect.servedModelName);
  assert.match(v.kvCacheLine ?? '', /GPU KV cache size/);
  assert.deepEqual(v.warnings, []);
  const again = await runPreflight(s, plan);
  assert.equal(again.sameIdentityRunning, true, again.restartReason ?? '');
});
