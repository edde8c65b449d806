/** The words of `pulse model history` (cli/commands/history.ts): a header, UTC ISO times, one duration format. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { historyText, onceWorded, resultWords, type HistoryRow } from '../../cli/commands/history.js';

const row = (over: Partial<HistoryRow>): HistoryRow => ({
  time: '2026-12-03T07:48:27.123Z', node: 'spark2', action: 'up', profile: 'best', result: 'ok (up)', ok: true, nodeState: 'up', error: null,
  durationS: 754.2, outcome: null, undid: null, workflowId: 'pulse-model-spark2', runId: 'r1', ui: null, ...over,
});

test('the result in words never reads "failed (failed)" nor repeats its step', () => {
  assert.equal(resultWords(row({})), 'ok, node up');
  const failed = row({ result: 'failed (failed): readiness: readiness not reached within 3 s', ok: false, nodeState: 'failed', error: 'readiness: readiness not reached within 3 s' });
  assert.equal(resultWords(failed), 'FAILED; node marked failed: readiness: not reached within 3 s');
  assert.equal(resultWords(row({ result: 'running', ok: null, nodeState: null })), 'running');
  const undone = { ok: false, nodeState: 'up', outcome: 'rolled-back', error: 'readiness: not reached within 4 s; rolled back to datagen, serving again after 21.3 s' };
  assert.equal(resultWords(row(undone)), 'FAILED, rolled back: readiness: not reached within 4 s; rolled back to datagen, serving again after 21.3 s');
  assert.match(historyText([row({ action: 'rollback', profile: 'datagen', undid: 'pulse-model-spark2/r0' })], null), /rollback datagen on spark2[\s\S]*\n {4}undoes pulse-model-spark2\/r0\n/);
  assert.equal(onceWorded('readiness: the server did not answer'), 'readiness: the server did not answer');
});

test('historyText: a header, then time (UTC ISO, to the second), deploy, duration, result; the link below', () => {
  const text = historyText([row({}), row({ action: 'down', profile: null, durationS: null, result: 'running', ok: null })], null);
  const lines = text.split('\n');
  assert.match(lines[0] ?? '', /^STARTED \(UTC\) +DEPLOY +TOOK +RESULT$/);
  assert.match(lines[1] ?? '', /^2026-12-03T07:48:27Z +up best on spark2 +12m34s +ok, node up$/);
  assert.equal(lines[2], '    pulse-model-spark2');
  assert.match(lines[3] ?? '', /^2026-12-03T07:48:27Z +down on spark2 +- +running$/);
  assert.equal(historyText([], null), 'no deploys yet\n');
});

test('the one time and duration format (runtime/format.ts): UTC ISO to the second; 8s, 3m12s, tenths for steps', async () => {
  const { duration, utc } = await import('../../runtime/format.js');
  assert.equal(utc('2026-12-03T07:48:27.999Z'), '2026-12-03T07:48:27Z');
  assert.equal(utc(new Date(Date.UTC(2026, 11, 3, 7, 48, 27))), '2026-12-03T07:48:27Z');
  assert.deepEqual([duration(8), duration(192), duration(3900), duration(0.44, { tenths: true }), duration(3.21, { tenths: true }), duration(12.3, { tenths: true })], ['8s', '3m12s', '1h05m', '0.4s', '3.2s', '12s']);
});
