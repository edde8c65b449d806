/**
 * The node's deploy lock (runtime/scripts/lock.sh) over real sshd on two simulated nodes: one holder at a time, the
 * refusal names the holder, the lease is judged by the node's clock, a stale lock can be taken, and a deploy whose
 * lock was taken (even if since released) learns that it lost it. The lock lives outside the recipe dir.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { isPulseError } from '../../runtime/errors.js';
import { openSession } from '../../runtime/node/connect.js';
import type { NodeSession } from '../../runtime/node/types.js';
import { nodeLock, type LockOwner } from '../../runtime/steps/index.js';
import { harness, type Harness } from './helpers.js';
import { until } from '../helpers/until.js';

let h: Harness;
let s: NodeSession;
let s3: NodeSession;
const A: LockOwner = { deployId: 'pulse-model-spark2/run-a', host: 'controller-a', action: 'up', leaseS: 120 };
const B: LockOwner = { deployId: 'pulse-model-spark2/run-b', host: 'controller-b', action: 'down', leaseS: 120 };

before(async () => {
  h = await harness(['spark2', 'spark3']);
  s = await openSession({ name: 'spark2', host: 'ssh', ssh: 'spark2' });
  s3 = await openSession({ name: 'spark3', host: 'ssh', ssh: 'spark3' });
});
after(async () => {
  await s?.close();
  await s3?.close();
  await h?.stop();
});

async function refusal(p: Promise<unknown>): Promise<string> {
  const e = await p.then(() => null, (err: unknown) => err);
  assert.ok(isPulseError(e) && e.kind === 'refused', `expected a refusal, got ${String(e)}`);
  return e.message;
}

test('one holder: a second deploy is refused naming the holder (deploy, controller, since, lease until); nothing written in the recipe', async () => {
  const dir = h.sim.node('spark2').recipeDir;
  const before = readdirSync(dir).sort();
  const a = await nodeLock(s, 'acquire', dir, A);
  assert.equal(a?.state, 'held');
  assert.equal(a?.live, true);
  assert.equal(a?.deployId, A.deployId);
  const msg = await refusal(nodeLock(s, 'acquire', dir, B));
  assert.match(msg, /locked by deploy pulse-model-spark2\/run-a from controller controller-a \(up\) since \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ, lease until \d{4}-\d\d-\d\dT[\d:]+Z; nothing was changed/);
  assert.match(await refusal(nodeLock(s, 'renew', dir, B)), /lost its lock/);
  // The holder's own retry (a resumed deploy) goes on and keeps its `since`.
  const again = await nodeLock(s, 'acquire', dir, A);
  assert.equal(again?.since, a?.since);
  assert.deepEqual(readdirSync(dir).sort(), before); // RUNTIME.md: pulse writes only .env, a backup and logs/ there
  const file = a?.file ?? '';
  assert.match(file, /\/\.local\/state\/pulse\/locks\/[0-9a-f]{24}\.lock$/);
  // Each node has its own home: spark3's recipe has no lock, and spark2's file is in spark2's home only.
  assert.equal((await nodeLock(s3, 'show', h.sim.node('spark3').recipeDir, null)), null);
  assert.ok(existsSync(join(h.sim.node('spark2').paths.homeState, 'locks', file.split('/').at(-1) ?? '')));
  assert.match(readFileSync(join(h.sim.node('spark2').paths.homeState, 'locks', file.split('/').at(-1) ?? ''), 'utf8'), /^deploy=pulse-model-spark2\/run-a$/m);
  await nodeLock(s, 'release', dir, A);
  const shown = await nodeLock(s, 'show', dir, null);
  assert.equal(shown?.state, 'released');
  assert.equal(shown?.live, false);
});

/** Until the node's own clock has passed the lock's `until` (show judges it, with the node's `date +%s`). */
async function staleOnNode(dir: string): Promise<void> {
  await until('the lease runs out on the node\'s clock', async () => (await nodeLock(s, 'show', dir, null))?.live === false, 10_000, { everyMs: 200 });
}

test('the lease: stale without renewal, then anyone may take it; the old holder learns it lost the lock, also after a release', async () => {
  const dir = h.sim.node('spark2').recipeDir;
  const short = { ...A, leaseS: 2 };
  await nodeLock(s, 'acquire', dir, short);
  await refusal(nodeLock(s, 'acquire', dir, B));
  await staleOnNode(dir);
  // Stale but not taken: the holder's renewal still works (nobody else touched the node).
  await nodeLock(s, 'renew', dir, short);
  assert.equal((await nodeLock(s, 'show', dir, null))?.live, true, 'the renewal made it live again');
  await staleOnNode(dir);
  const b = await nodeLock(s, 'acquire', dir, B);
  assert.equal(b?.deployId, B.deployId);
  assert.match(await refusal(nodeLock(s, 'renew', dir, short)), /lost its lock \(its lease ran out\); now held by deploy pulse-model-spark2\/run-b from controller controller-b \(down\)/);
  await nodeLock(s, 'release', dir, short); // not the holder's: a no-op
  assert.equal((await nodeLock(s, 'show', dir, null))?.deployId, B.deployId);
  await nodeLock(s, 'release', dir, B);
  assert.match(await refusal(nodeLock(s, 'renew', dir, short)), /took it and released it/);
  // Free again: a new deploy takes it.
  assert.equal((await nodeLock(s, 'acquire', dir, A))?.deployId, A.deployId);
  await nodeLock(s, 'release', dir, A);
});

test('many deploys acquiring at once: exactly one gets the lock (flock + rename on the node)', async () => {
  const dir = h.sim.node('spark3').recipeDir;
  const owners = Array.from({ length: 8 }, (_, i): LockOwner => ({ deployId: `pulse-model-spark3/run-${i}`, host: `c${i}`, action: 'up', leaseS: 120 }));
  const sessions = await Promise.all(owners.map(() => openSession({ name: 'spark3', host: 'ssh', ssh: 'spark3' })));
  try {
    const results = await Promise.allSettled(owners.map((o, i) => nodeLock(sessions[i] as NodeSession, 'acquire', dir, o)));
    const won = results.filter((r) => r.status === 'fulfilled');
    assert.equal(won.length, 1);
    const holder = (won[0] as PromiseFulfilledResult<Awaited<ReturnType<typeof nodeLock>>>).value?.deployId;
    for (const r of results) if (r.status === 'rejected') assert.match(String((r.reason as Error).message), new RegExp(`locked by deploy ${holder ?? 'x'}`));
  } finally {
    await Promise.all(sessions.map((x) => x.close()));
  }
});

test('a longer lease of another controller is its own, not corrupt: the file records it, and only a lease beyond it (plus 60 s) is cleared', async () => {
  const dir = h.sim.node('spark2').recipeDir;
  const long = { ...A, leaseS: 600 };
  const a = await nodeLock(s, 'acquire', dir, long);
  assert.equal(a?.corrupt, undefined);
  const file = join(h.sim.node('spark2').paths.homeState, 'locks', (a?.file ?? '').split('/').at(-1) ?? '');
  assert.match(readFileSync(file, 'utf8'), /^lease=600$/m);
  // B runs with a 120 s lease: A's 600 s lease is still live, and B is refused.
  assert.match(await refusal(nodeLock(s, 'acquire', dir, B)), /locked by deploy pulse-model-spark2\/run-a/);
  // A number longer than bash can count (a forged file): as far ahead as can be, so corrupt, and B clears it.
  writeFileSync(file, readFileSync(file, 'utf8').replace(/^until=\d+$/m, 'until=99999999999999999999999'));
  const shown = await nodeLock(s, 'show', dir, null);
  assert.equal(shown?.live, false);
  assert.match(shown?.corrupt ?? '', /^corrupt lease: deploy pulse-model-spark2\/run-a from controller controller-a \(up\) since \S+, lease until \S+, \d+ s ahead of this node's clock \(\S+\), more than one lease \(600 s\) plus 60 s/);
  const b = await nodeLock(s, 'acquire', dir, B);
  assert.equal(b?.deployId, B.deployId);
  assert.match(b?.cleared ?? '', /^corrupt lease: deploy pulse-model-spark2\/run-a .*; treated as stale: this deploy replaced it with its own lock \(lease until \S+\)$/);
  assert.match(await refusal(nodeLock(s, 'renew', dir, long)), /lost its lock/);
  await nodeLock(s, 'release', dir, B);
});
