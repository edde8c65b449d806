/** Last known good (runtime/state/last-good.ts): set by a verified up, kept by a failed one, pointed at the backup. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { nextLastKnownGood, protectedBackup } from '../../runtime/state/last-good.js';
import type { EnvIdentity, NodeState } from '../../runtime/model/index.js';

const A: EnvIdentity = { sha256: 'a'.repeat(64), profile: 'stable', overlay: 'none' };
const B: EnvIdentity = { sha256: 'b'.repeat(64), profile: 'best', overlay: 'none' };

function state(lkg: NodeState['lastKnownGood']): NodeState {
  return {
    node: 'spark2', state: 'up', action: 'up', profile: 'stable', identity: A, workflowId: 'w', runId: 'r', at: 't0', backupPath: null,
    logPath: null, kvCacheLine: null, maxModelLen: null, servedModelName: null, overlayManifest: null, error: null, previousProfile: null, lastKnownGood: lkg,
  };
}

test('a verified up becomes last known good, the live .env', () => {
  const g = nextLastKnownGood(null, { state: 'up', action: 'up', profile: 'stable', identity: A, backupPath: '/r/.env.pulse-bak-1', previousIdentity: null }, 't1', 'pulse-model-spark2');
  assert.deepEqual(g, { profile: 'stable', identity: A, at: 't1', workflowId: 'pulse-model-spark2', backupPath: null });
});

test('a failed up keeps it and points it at the backup of the live .env it replaced', () => {
  const old = state({ profile: 'stable', identity: A, at: 't1', workflowId: 'w1', backupPath: null });
  const change = { state: 'failed', action: 'up', profile: 'best', identity: B, backupPath: '/r/.env.pulse-bak-2', previousIdentity: A } as const;
  const g = nextLastKnownGood(old, change, 't2', 'w2');
  assert.deepEqual(g, { profile: 'stable', identity: A, at: 't1', workflowId: 'w1', backupPath: '/r/.env.pulse-bak-2' });
  assert.equal(protectedBackup({ ...old, lastKnownGood: g }), '/r/.env.pulse-bak-2');
  // A second failed up backs up the first failure's .env, not the good one: the pointer stays.
  const again = nextLastKnownGood({ ...old, lastKnownGood: g }, { ...change, backupPath: '/r/.env.pulse-bak-3', previousIdentity: B }, 't3', 'w3');
  assert.equal(again?.backupPath, '/r/.env.pulse-bak-2');
});

test('a backup of a .env that was not last known good (edited, other identity) is not pointed to', () => {
  const old = state({ profile: 'stable', identity: A, at: 't1', workflowId: 'w1', backupPath: null });
  const g = nextLastKnownGood(old, { state: 'starting', action: 'up', profile: 'best', identity: B, backupPath: '/r/.env.pulse-bak-2', previousIdentity: null }, 't2', 'w2');
  assert.equal(g?.backupPath, null);
});

test('a same-identity up keeps the first verification; a down keeps it; a verified new up replaces it', () => {
  const first = { profile: 'stable', identity: A, at: 't1', workflowId: 'w1', backupPath: null };
  const old = state(first);
  assert.deepEqual(nextLastKnownGood(old, { state: 'up', action: 'up', profile: 'stable', identity: A, backupPath: null, previousIdentity: A }, 't2', 'w2'), first);
  assert.deepEqual(nextLastKnownGood(old, { state: 'down', action: 'down', profile: null, identity: null, backupPath: null, previousIdentity: null }, 't2', 'w2'), first);
  assert.equal(nextLastKnownGood(old, { state: 'up', action: 'up', profile: 'best', identity: B, backupPath: '/r/b', previousIdentity: A }, 't3', 'w3')?.profile, 'best');
  assert.equal(nextLastKnownGood(state(undefined), { state: 'failed', action: 'up', profile: 'best', identity: B, backupPath: '/r/b', previousIdentity: A }, 't3', 'w3'), null);
});
