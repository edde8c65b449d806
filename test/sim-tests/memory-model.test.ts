import { test } from 'node:test';
import assert from 'node:assert/strict';
import { availableGiB, DEFAULT_MEMORY, renderMeminfo, watermarkPenaltyGiB } from '../sim/memory.js';

const m = DEFAULT_MEMORY;

test('MemAvailable: idle, running, linear recovery after the stop, pinned', () => {
  assert.equal(availableGiB(m, false, null, 10, 0), m.idleAvailableGiB);
  assert.equal(availableGiB(m, true, null, 10, 0), m.runningAvailableGiB);
  const half = availableGiB(m, false, 1000, 10, 1000 + m.recoverMs / 2);
  assert.equal(half, (m.idleAvailableGiB + m.runningAvailableGiB) / 2);
  assert.equal(availableGiB(m, false, 1000, 10, 1000 + m.recoverMs), m.idleAvailableGiB);
  assert.equal(availableGiB({ ...m, pinnedAvailableGiB: 50 }, false, null, 10, 0), 50);
});

test('a watermark factor of 300 puts idle MemAvailable below the 100 GiB gate (spec: 96.6-99.4 GiB)', () => {
  assert.equal(watermarkPenaltyGiB(128, 10), 0);
  const idle = availableGiB(m, false, null, 300, 0);
  assert.ok(idle > 95 && idle < 100, String(idle));
});

test('meminfo has the same length for any value, so in-place rewrites never leave a partial file', () => {
  const a = renderMeminfo(128, 118);
  const b = renderMeminfo(128, 0.5);
  assert.equal(a.length, b.length);
  assert.match(a, /^MemTotal:\s+134217728 kB$/m);
  assert.match(a, /^MemAvailable:\s+123731968 kB$/m);
});
