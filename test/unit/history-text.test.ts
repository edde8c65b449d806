/** The words of `pulse model history` (cli/commands/history.ts): a header, UTC ISO times, one duration format. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { historyText, onceWorded, resultWords, type HistoryRow } from '../../cli/commands/history.js';

const row = (over: Partial<HistoryRow>): HistoryRow => ({
  time: '2026-12-03T07:48:27.123Z', node: 'spark2', action: 'up', profile: 'best', result: 'ok (up)', ok: true, nodeState: 'up', error: null,
  durationS: 754.2, outcome: null, undid: null, drain: null, workflowId: 'pulse-model-spark2', runId: 'r1', ui: null, ...over,
});

test('the result in words never reads "failed (failed)" nor repeats its step', () => {
  assert.equal(resultWords(row({})), 'ok, node up');
  const failed = row({ result: 'failed (failed): readiness: readiness not reached within 3 s', ok: false, nodeState: 'failed', error: 'readiness: readiness not reached within 3 s' });
  assert.equal(resultWords(failed), 'FAILED; node marked failed: readiness: not reached within 3 s');
  assert.equal(resultWords(row({ result: 'running', ok: null, nodeState: null })), 'running');
  const undone = { ok: false, nodeState: 'up', outcome: 'rolled-back', error: 'readiness: not reached within 4 s; rolled back to datagen, serving again after 21.3 s' };
  assert.equal(resultWords(row(undone)), 'FAILED, rolled back: readiness: not reached within 4 s; rolled back to datagen, serving again after 21.3 s');
  const rb = row({ action: 'rollback', profile: 'datagen', undid: 'pulse-model-spark2/r0', runId: 'r2', time: '2026-12-03T08:00:00.000Z' });
  assert.match(historyText([rb], null), /rollback datagen on spark2 .*ok, node up; undoes run r0$/m);
  assert.match(historyText([rb, row({ runId: 'r0' })], null), /rollback datagen on spark2 .*ok, node up; undoes up best of 2026-12-03T07:48:27Z$/m, 'the undone deploy named when it is listed');
  // a rollout: each node's outcome, never `node ?` (issue 30 item 10)
  const rollout = row({ action: 'rollout', profile: 'best', node: 'spark2,spark3', result: 'succeeded: spark2 succeeded, spark3 succeeded', nodeState: null });
  assert.equal(resultWords(rollout), 'ok: spark2 succeeded, spark3 succeeded');
  const stopped = row({ action: 'rollout', node: 'spark2,spark3', result: 'failed: spark2 failed, spark3 not-started', ok: false, nodeState: null, error: 'spark2: readiness: not reached within 4 s' });
  assert.equal(resultWords(stopped), 'FAILED: spark2 failed, spark3 not-started; spark2: readiness: not reached within 4 s');
  assert.equal(onceWorded('readiness: the server did not answer'), 'readiness: the server did not answer');
});

test('historyText: a header, then one line per deploy: time (UTC ISO, to the second), deploy, duration, result; --wide adds the link below', () => {
  const rows = [row({}), row({ action: 'down', profile: null, durationS: null, result: 'running', ok: null })];
  const lines = historyText(rows, 'hint').split('\n');
  assert.match(lines[0] ?? '', /^STARTED \(UTC\) +DEPLOY +TOOK +RESULT$/);
  assert.match(lines[1] ?? '', /^2026-12-03T07:48:27Z +up best on spark2 +12m34s +ok, node up$/);
  assert.match(lines[2] ?? '', /^2026-12-03T07:48:27Z +down on spark2 +- +running$/);
  assert.match(lines[3] ?? '', /^the steps of one: pulse model history --steps/);
  const wide = historyText(rows, 'hint', true).split('\n');
  assert.equal(wide[2], '    pulse-model-spark2');
  assert.equal(wide[5], 'hint');
  assert.equal(historyText([], null), 'no deploys yet\n');
});

test('history --since and every duration flag share one grammar; a time goes into the query only as the ISO time it means', async () => {
  const { historySince, parseDuration } = await import('../../cli/program/flags.js');
  assert.deepEqual(['90', '2.5', '45s', '10m', '1h30m', '2h', '1h', '', '10 minutes', '1d', 'm', '1m30', '-5'].map(parseDuration), [90, 2.5, 45, 600, 5400, 7200, 3600, null, null, null, null, null, null]);
  const now = () => Date.parse('2026-12-04T03:00:00Z');
  assert.equal(historySince('1h30m', undefined, now), '2026-12-04T01:30:00.000Z');
  assert.equal(historySince('2026-12-03', undefined, now), '2026-12-03T00:00:00.000Z');
  assert.throws(() => historySince("2026' OR '1'='1", undefined, now), /--since must be a duration/);
  const { historyQuery } = await import('../../cli/commands/history.js');
  assert.match(historyQuery('spark2', { since: '2026-12-04T01:30:00.000Z', failed: true }), / AND PulseNode = 'spark2' AND StartTime > '2026-12-04T01:30:00.000Z' AND \(ExecutionStatus IN \('Failed', 'TimedOut', 'Terminated'\) OR PulseOutcome IN \('failed', 'rolled-back', 'watchdog-down'\)\)$/);
});

test('the one time and duration format (runtime/format.ts): UTC ISO to the second; 8s, 3m12s, tenths for steps', async () => {
  const { duration, utc } = await import('../../runtime/format.js');
  assert.equal(utc('2026-12-03T07:48:27.999Z'), '2026-12-03T07:48:27Z');
  assert.equal(utc(new Date(Date.UTC(2026, 11, 3, 7, 48, 27))), '2026-12-03T07:48:27Z');
  assert.deepEqual([duration(8), duration(192), duration(3900), duration(0.44, { tenths: true }), duration(3.21, { tenths: true }), duration(12.3, { tenths: true })], ['8s', '3m12s', '1h05m', '0.4s', '3.2s', '12s']);
});

test('logs -f says why it ended, in words of each kind logs.sh reports', async () => {
  const { followEndLine } = await import('../../cli/commands/logs.js');
  const { followEndOf } = await import('../../runtime/status/logs.js');
  const line = (v: string): string | null => followEndLine('vllm-qwen38', 'spark2', followEndOf(v));
  assert.match(line('replaced') ?? '', /was replaced \(a deploy started a new one\); its log ended\. The new one: pulse model logs --node spark2 -f$/);
  assert.match(line('removed') ?? '', /was removed/);
  assert.match(line('docker-down') ?? '', /the Docker daemon on spark2 stopped answering/);
  assert.match(line('exited:137') ?? '', /stopped \(exited, exit code 137\); its log ended\. Why: pulse model status --node spark2$/);
  assert.equal(line(''), null, 'no follow, no line');
});
