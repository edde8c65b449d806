/**
 * The readiness estimate from history (issue 18 item 3): 0, 1 and 5 earlier starts, identity before profile, the
 * bounded list, and the state step's share (activities/readiness-history.ts) through a real state dir.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { readinessHistoryAfter, readinessOnStart } from '../../activities/readiness-history.js';
import type { EnvIdentity, NodeState } from '../../runtime/model/index.js';
import { about, estimateOf, estimateWords, KEEP_IN_ALL, KEEP_PER_PROFILE, readinessEstimate, recordReadiness, samplesOf, slowerThanUsual } from '../../runtime/vllm/readiness-eta.js';
import { readNodeState, writeNodeState } from '../../runtime/state/state.js';

const A: EnvIdentity = { sha256: 'a'.repeat(64), profile: 'best', overlay: 'none' };
const A2: EnvIdentity = { sha256: 'c'.repeat(64), profile: 'best', overlay: 'none' };
const B: EnvIdentity = { sha256: 'b'.repeat(64), profile: 'stable', overlay: 'none' };

function base(state: NodeState['state'], identity: EnvIdentity): NodeState {
  return {
    node: 'spark2', state, action: 'up', profile: identity.profile, identity, workflowId: 'w', runId: 'r', at: 't', backupPath: null, logPath: null,
    kvCacheLine: null, maxModelLen: null, servedModelName: null, overlayManifest: null, error: null, previousProfile: null,
  };
}

test('0 earlier starts: first start of this profile here', () => {
  const e = readinessEstimate([], A);
  assert.deepEqual(e, { estimateS: null, samples: 0, basis: 'none' });
  assert.equal(estimateWords(e), 'first start of this profile here');
  assert.equal(slowerThanUsual(e, 1e6), false);
});

test('1 earlier start: its duration; another identity of the profile counts only when the identity has none', () => {
  const one = recordReadiness([], A, 900, 't1');
  assert.deepEqual(readinessEstimate(one, A), { estimateS: 900, samples: 1, basis: 'identity' });
  assert.deepEqual(readinessEstimate(one, A2), { estimateS: 900, samples: 1, basis: 'profile' });
  assert.deepEqual(readinessEstimate(one, B).basis, 'none');
  assert.equal(estimateWords(readinessEstimate(one, A)), '~15m (1 earlier start of this .env)');
  assert.equal(slowerThanUsual(readinessEstimate(one, A), 1350), false);
  assert.equal(slowerThanUsual(readinessEstimate(one, A), 1351), true);
});

test('5 earlier starts: the median, so one slow start does not move it', () => {
  let list = recordReadiness([], A2, 60, 't0');
  for (const [i, s] of [840, 900, 3600, 870, 960].entries()) list = recordReadiness(list, A, s, `t${i + 1}`);
  assert.deepEqual(readinessEstimate(list, A), { estimateS: 900, samples: 5, basis: 'identity' });
  assert.equal(about(900), '~15m');
  assert.equal(about(3599), '~1h00m');
});

test('the list is bounded: the newest per profile and in all', () => {
  let list = samplesOf(null);
  for (let i = 0; i < 12; i++) list = recordReadiness(list, A, 100 + i, `a${i}`);
  assert.equal(list.length, KEEP_PER_PROFILE);
  assert.deepEqual(list.map((x) => x.s), [107, 108, 109, 110, 111]);
  for (let p = 0; p < 10; p++) for (let i = 0; i < 3; i++) list = recordReadiness(list, { ...B, profile: `p${p}` }, 50, `p${p}-${i}`);
  assert.ok(list.length <= KEEP_IN_ALL);
  // Malformed entries in a hand-edited state file are dropped, not trusted.
  assert.equal(samplesOf({ readinessHistory: [{ profile: 'x' }, null, { profile: 'best', sha256: 'a', s: -1, at: 't' }] as never }).length, 0);
});

test('the state step: a verified up after a start records its wait, a starting write answers the estimate', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pulse-eta-'));
  try {
    const write = async (st: NodeState['state'], id: EnvIdentity, input: unknown) => {
      const old = await readNodeState(dir, 'spark2');
      const answer = readinessOnStart(old, base(st, id));
      await writeNodeState(dir, { ...base(st, id), ...readinessHistoryAfter(old, base(st, id), input, `at-${st}`) });
      return answer.readiness;
    };
    assert.deepEqual(await write('starting', A, {}), { estimateS: null, samples: 0, basis: 'none' });
    assert.equal(await write('up', A, { readinessS: 812.4 }), undefined);
    assert.deepEqual((await readNodeState(dir, 'spark2'))?.readinessHistory, [{ profile: 'best', sha256: A.sha256, s: 812, at: 'at-up' }]);
    // A failed or same-identity up (no readinessS) and a down keep the list; a bogus duration is no sample.
    await write('failed', A, { readinessS: 99 });
    await write('up', A, {});
    await write('up', A, { readinessS: 'soon' });
    assert.equal((await readNodeState(dir, 'spark2'))?.readinessHistory?.length, 1);
    for (const s of [900, 860, 1000, 950]) {
      await write('starting', A, {});
      await write('up', A, { readinessS: s });
    }
    assert.deepEqual(await write('starting', A, {}), { estimateS: 900, samples: 5, basis: 'identity' });
    assert.deepEqual(await write('starting', B, {}), { estimateS: null, samples: 0, basis: 'none' });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('the wait\'s hint is untrusted: only a well-formed estimate is heartbeated', () => {
  assert.deepEqual(estimateOf({ readinessEstimate: { estimateS: 900, samples: 5, basis: 'identity' } }), { estimate: { estimateS: 900, samples: 5, basis: 'identity' } });
  assert.deepEqual(estimateOf({ readinessEstimate: { estimateS: null, samples: 0, basis: 'x' } }), { estimate: { estimateS: null, samples: 0, basis: 'none' } });
  for (const bad of [undefined, null, {}, { readinessEstimate: { estimateS: 'soon', samples: 1 } }, { readinessEstimate: { estimateS: 9, samples: -1 } }]) assert.deepEqual(estimateOf(bad), {});
});
