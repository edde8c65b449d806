/**
 * worker/versioning.ts without a server: the build id (the same for the same bundle, new for any change) and the
 * rule deciding whether a starting worker makes its build the current one.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildIdOf, decide } from '../../worker/versioning.js';

const at = (seconds: number): { seconds: number } => ({ seconds });
const summary = (buildId: string, created: number, everCurrent = false) => ({
  deploymentVersion: { buildId, deploymentName: 'pulse' },
  createTime: at(created),
  ...(everCurrent ? { firstActivationTime: at(created + 1) } : {}),
});
const info = (current: string | null, ...summaries: ReturnType<typeof summary>[]) => ({
  versionSummaries: summaries,
  routingConfig: current ? { currentDeploymentVersion: { buildId: current, deploymentName: 'pulse' } } : {},
});

test('the build id is the package version and 12 hex of the bundle hash: stable per bundle, new on any change', () => {
  const a = buildIdOf('code', '1.2.3');
  assert.match(a, /^1\.2\.3-[0-9a-f]{12}$/);
  assert.equal(buildIdOf('code', '1.2.3'), a);
  assert.notEqual(buildIdOf('code ', '1.2.3'), a);
  assert.notEqual(buildIdOf('code', '1.2.4'), a);
});

test('decide: wait until the version is visible, promote when nothing is current or a never-current newer build starts', () => {
  assert.equal(decide(undefined, 'b', true), null);
  assert.equal(decide(info(null, summary('a', 10)), 'b', true), null, 'not yet visible: retry');
  assert.equal(decide(info(null, summary('b', 10)), 'b', true), 'promote');
  assert.equal(decide(info('a', summary('a', 10, true), summary('b', 20)), 'b', true), 'promote');
  assert.deepEqual(decide(info('b', summary('a', 10, true), summary('b', 20, true)), 'b', true), { kind: 'already-current' });
});

test('decide: an older build, or one that was current before (rolled back, draining), leaves the current one alone', () => {
  assert.deepEqual(decide(info('b', summary('a', 10), summary('b', 20, true)), 'a', true), { kind: 'left', current: 'b', reason: 'the current build is newer' });
  assert.deepEqual(decide(info('a', summary('a', 10, true), summary('b', 20, true)), 'b', true), { kind: 'left', current: 'a', reason: 'this build was current before (rolled back or draining)' });
});

test('decide: when no live worker of the current build polls, any build takes over (new deploys would wait for nobody)', () => {
  assert.equal(decide(info('b', summary('a', 10, true), summary('b', 20, true)), 'a', false), 'promote', 'an old build reinstalled after the new one stopped');
  assert.equal(decide(info('b', summary('a', 10), summary('b', 20, true)), 'a', false), 'promote');
  assert.deepEqual(decide(info('a', summary('a', 10, true)), 'a', false), { kind: 'already-current' });
});
