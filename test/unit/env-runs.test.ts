/**
 * What the state file keeps of each .env a node ran (runtime/state/env-runs.ts): the rollback's marks and its default
 * choice read it. The sequence of an up that failed at readiness and was undone by its auto-rollback.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { backupMark, nextEnvRuns, type EnvRunChange } from '../../runtime/state/env-runs.js';

const id = (profile: string) => ({ sha256: `${profile}-sha`, profile, overlay: 'none' });
const change = (over: Partial<EnvRunChange>): EnvRunChange => ({
  state: 'up', action: 'up', profile: 'best', identity: id('best'), backupPath: null, previousIdentity: null, logPath: '/r/logs/pulse-up-1.log', error: null, ...over,
});

test('served, failed at readiness, undone by the next .env that serves; each backup marked by the .env it holds', () => {
  let s = nextEnvRuns(null, change({}), '2026-12-07T22:10:00.000Z');
  // up datagen: backs up best's .env (B1), starts, dies at readiness; the compensation marks it failed
  s = nextEnvRuns(s, change({ state: 'failed', profile: 'datagen', identity: id('datagen'), backupPath: '/r/B1', previousIdentity: id('best'), error: 'readiness: simA: the server will not become ready' }), '2026-12-07T22:19:00.000Z');
  assert.deepEqual(backupMark(s, '/r/B1'), { profile: 'best', failed: false, text: 'best: served 22:10Z' });
  // the auto-rollback restores B1: it backs up the failed datagen .env (B2), and best serves again
  s = nextEnvRuns(s, change({ backupPath: '/r/B2', previousIdentity: id('datagen') }), '2026-12-07T22:20:00.000Z');
  assert.deepEqual(backupMark(s, '/r/B2'), { profile: 'datagen', failed: true, text: 'datagen: failed at readiness 22:19Z, undone 22:20Z (best served again)' });
  assert.equal(backupMark(s, '/r/B1')?.text, 'best: served 22:20Z');
  assert.equal(backupMark(s, '/r/unknown'), null, 'a backup the state does not know is not marked');
  // a failure before the start ran (no start log) says nothing about the .env: not marked failed
  const early = nextEnvRuns(null, change({ state: 'failed', logPath: null, error: 'memory: not enough' }), '2026-12-07T22:30:00.000Z');
  assert.deepEqual(early.envRuns, []);
  // a damaged state file (not arrays) is read as empty
  assert.deepEqual(nextEnvRuns({ envRuns: 'x', backupsOf: 3 } as never, change({}), '2026-12-07T22:40:00.000Z').backupsOf, []);
});
