/** The readiness wait line (cli/wait-line.ts, issue 18): phase, bar against the estimate, fitted to the width. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { columnsOf } from '../../cli/live-line.js';
import { bar, plainWaitLine, waitLine } from '../../cli/wait-line.js';
import type { ReadinessEstimate, WaitProgress } from '../../runtime/model/index.js';

const wait: WaitProgress = {
  step: 'readiness', attempt: 552, lastAnswer: 'GET http://127.0.0.1:8000/v1/models: no answer', elapsedS: 552, timeoutS: 2100,
  phase: { id: 'weights', words: 'loading weights 23/38', done: 23, total: 38 }, lastLine: 'Loading safetensors checkpoint shards:  61% Completed | 23/38',
};
const est: ReadinessEstimate = { estimateS: 900, samples: 5, basis: 'identity' };
const name = '7/9 readiness on spark2';

test('the full line: bar and share of the estimate, the phase, the time against the deadline and the usual time', () => {
  assert.equal(waitLine({ name, wait, estimate: est }, 120), '7/9 readiness on spark2  ▕████████▋     ▏ 61%  loading weights 23/38  9m12s of 35m00s, usually ~15m');
  assert.equal(bar(0), `▕${' '.repeat(14)}▏`);
  assert.equal(bar(1), `▕${'█'.repeat(14)}▏`);
});

test('narrower terminals lose the bar, then the usual time, then the share, then the end of the phase; the deadline stays', () => {
  assert.equal(waitLine({ name, wait, estimate: est }, 90), '7/9 readiness on spark2  61%  loading weights 23/38  9m12s of 35m00s, usually ~15m');
  assert.equal(waitLine({ name, wait, estimate: est }, 70), '7/9 readiness on spark2  61%  loading weights 23/38  9m12s of 35m00s');
  assert.equal(waitLine({ name, wait, estimate: est }, 64), '7/9 readiness on spark2  loading weights 23/38  9m12s of 35m00s');
  assert.equal(waitLine({ name, wait, estimate: est }, 60), '7/9 readiness on spark2  loading weights 2…  9m12s of 35m00s');
  assert.equal(waitLine({ name, wait, estimate: est }, 55), '7/9 readiness on spark2  loading weig…  9m12s of 35m00s');
  for (const w of [20, 39, 40, 59, 79, 80, 199, 200]) assert.ok(columnsOf(waitLine({ name, wait, estimate: est }, w)) <= w, `width ${w}`);
  assert.equal(waitLine({ name, wait, estimate: est }, 40), '7/9 readiness on spark2  loading weight…');
});

test('a server that has not moved for 20 s says so, and the line keeps the stall and the deadline at 80 columns', () => {
  const stuck: WaitProgress = { ...wait, elapsedS: 30, timeoutS: 45, movedAtS: 6, phase: { id: 'kv-cache', words: 'sizing the KV cache (37.48 GiB free)' } };
  assert.equal(waitLine({ name, wait: stuck, estimate: null }, 120), '7/9 readiness on spark2  sizing the KV cache (37.48 GiB free)  no change for 24s  30s of 45s');
  assert.equal(waitLine({ name, wait: stuck, estimate: null }, 79), '7/9 readiness on spark2  sizing the KV cache (3…  no change for 24s  30s of 45s');
  assert.doesNotMatch(waitLine({ name, wait: { ...stuck, movedAtS: 11 }, estimate: null }, 120), /no change/);
  assert.equal(plainWaitLine({ name, wait: stuck, estimate: null }), '  … 7/9 readiness on spark2: sizing the KV cache (37.48 GiB free) (no change for 24s), 30s of 45s');
});

test('no estimate: first start words; no phase: the log line; nothing at all: the probe answer', () => {
  const none: ReadinessEstimate = { estimateS: null, samples: 0, basis: 'none' };
  assert.equal(waitLine({ name, wait, estimate: none }, 200), '7/9 readiness on spark2  loading weights 23/38  9m12s of 35m00s, first start of this profile here');
  const noPhase = { ...wait, phase: null, lastLine: 'WARNING some \x1b[31mred\x1b[0m line\r' };
  assert.equal(waitLine({ name, wait: noPhase, estimate: null }, 200), '7/9 readiness on spark2  WARNING some red line  9m12s of 35m00s');
  assert.equal(plainWaitLine({ name, wait, estimate: est }), '  … 7/9 readiness on spark2: 61%, loading weights 23/38, 9m12s of 35m00s, usually ~15m');
  // Past the estimate the share stays below 100 % while the server is not ready.
  assert.match(waitLine({ name, wait: { ...wait, elapsedS: 2000 }, estimate: est }, 200), / 99% .* 33m20s of 35m00s, usually ~15m$/);
});
