/**
 * The step catalog (runtime/steps/catalog.ts) is the one home of each step: every activity the workflows call has
 * a row, the rows are unique, the notes read results as the activities return them, and docs/ARCHITECTURE.md's
 * step table is the catalog's.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { DOWN_STEPS, FRAME_STEPS, noteOf, noticeOf, ROLLBACK_STEPS, ROLLOUT_STEPS, stepOfActivity, summaryOf, UP_STEPS, verdictOf, WATCHDOG_STEPS } from '../../runtime/steps/catalog.js';
import type { StepDef } from '../../runtime/steps/catalog.js';
import { stepNote, stepVerdict } from '../../cli/deploy-client/follow-run.js';
import { REPO_ROOT } from '../helpers/paths.js';

const TABLES: [string, Record<string, StepDef>][] = [
  ['up', UP_STEPS], ['down', DOWN_STEPS], ['every deploy', FRAME_STEPS], ['rollback', ROLLBACK_STEPS], ['rollout', ROLLOUT_STEPS], ['watchdog', WATCHDOG_STEPS],
];
const ALL = TABLES.flatMap(([, t]) => Object.values(t));

test('every row has a unique summary within its deploy, and the up steps are numbered 1..9 in order (the drain is part of step 3)', () => {
  for (const [, t] of TABLES) {
    const labels = Object.values(t).map((d) => d.label);
    assert.equal(new Set(labels).size, labels.length);
  }
  // RUNTIME.md's nine steps stay as they are: the drain is the first part of step 3, before its stop (issue 29).
  assert.equal(UP_STEPS.drain.label, '3/9 drain');
  const numbered = Object.values(UP_STEPS).filter((d) => d !== UP_STEPS.drain).map((d) => /^(\d)\/9 /.exec(d.label)?.[1]).filter((n) => n !== undefined);
  assert.deepEqual(numbered, ['1', '2', '3', '4', '5', '6', '7', '8', '9']);
});

test('a scheduled activity finds its row by type and summary, also where one activity serves several rows', () => {
  for (const d of ALL) assert.equal(stepOfActivity(d.activity, summaryOf(d, 'spark2')), d, d.label);
  assert.equal(stepOfActivity('publishState', 'state starting on spark2'), UP_STEPS.starting);
  assert.equal(stepOfActivity('publishState', null), null, 'ambiguous without a summary');
  assert.equal(stepOfActivity('runPreflight', null), UP_STEPS.preflight);
  assert.equal(stepOfActivity('noSuchActivity', 'x on y'), null);
});

test('the notes read the step results', () => {
  assert.equal(noteOf(UP_STEPS.preflight, { restartReason: '--restart given' }), 'restart: --restart given');
  assert.equal(noteOf(UP_STEPS.preflight, { restartReason: null }), null);
  assert.equal(noteOf(UP_STEPS.memory, { memAvailableGiB: 93.1 }), 'MemAvailable 93.1 GiB');
  assert.equal(noteOf(UP_STEPS.writeEnv, { written: false }), 'same identity: not written');
  assert.equal(noteOf(UP_STEPS.writeEnv, { written: true, backupPath: '/r/.env.pulse-bak-1', carriedSecretLines: 2 }), 'backup /r/.env.pulse-bak-1, 2 secret line(s) carried');
  assert.equal(noteOf(UP_STEPS.start, { started: false, logPath: '/l' }), 'already started by this deploy');
  assert.equal(noteOf(UP_STEPS.start, { started: true, logPath: '/l' }), 'log /l');
  assert.equal(noteOf(UP_STEPS.verify, { kvCacheLine: 'INFO 12-02 09:20:05 [kv.py:1] GPU KV cache size: 9 tokens' }), 'GPU KV cache size: 9 tokens');
  assert.equal(noteOf(DOWN_STEPS.stop, { wasRunning: false }), 'was not running');
  assert.equal(noteOf(FRAME_STEPS.lock, { lock: { since: 'a', leaseUntil: 'b' } }), 'held since a, lease until b');
  assert.equal(noteOf(FRAME_STEPS.lock, { lock: null }), null);
  assert.equal(noteOf(UP_STEPS.readiness, { ready: true }), null);
  // The drain: nothing in flight, what finished, what the stop cut, and what pulse counted without /metrics.
  const drain = { source: 'metrics', budgetS: 300, waitedS: 12, idle: true, atStart: 0, drained: 0, cut: 0 };
  assert.equal(noteOf(UP_STEPS.drain, drain), 'nothing in flight');
  assert.equal(noteOf(UP_STEPS.drain, { ...drain, atStart: 3, drained: 3 }), '3 requests finished in 12s');
  assert.equal(noteOf(DOWN_STEPS.drain, { ...drain, idle: false, atStart: 3, drained: 2, cut: 1 }), 'drain budget 300s ran out: 1 request cut');
  assert.equal(noteOf(UP_STEPS.drain, { ...drain, source: 'connections', detail: 'the server serves no /metrics (404)' }), 'nothing in flight (the server serves no /metrics (404))');
  assert.equal(noteOf(UP_STEPS.drain, { skipped: true }), 'skipped (drain budget 0)');
  assert.equal(noteOf(UP_STEPS.drain, { source: 'not-running' }), 'nothing serves');
  // Its line shows without --verbose only when it has news: RUNTIME.md's steps stay as they are for an idle node.
  assert.equal(UP_STEPS.drain.bookkeeping, true);
  assert.equal(noticeOf(UP_STEPS.drain, drain), null, 'nothing in flight, read from /metrics');
  assert.equal(noticeOf(UP_STEPS.drain, { source: 'not-running' }), null);
  assert.equal(noticeOf(UP_STEPS.drain, { ...drain, atStart: 3, drained: 3 }), '3 requests finished in 12s');
  assert.equal(noticeOf(DOWN_STEPS.drain, { ...drain, idle: false, atStart: 3, drained: 2, cut: 1 }), 'drain budget 300s ran out: 1 request cut');
  assert.match(noticeOf(UP_STEPS.drain, { ...drain, source: 'connections', detail: 'no /metrics' }) ?? '', /no \/metrics/, 'a fallback is said');
  assert.equal(noticeOf(UP_STEPS.drain, { skipped: true }), 'skipped (drain budget 0)');
  // The rollout's gate (its closing table and the e2e test read these words).
  assert.equal(noteOf(ROLLOUT_STEPS.smoke, { ok: true, latencyS: 0.4567 }), 'smoke answered in 457 ms');
  assert.equal(noteOf(ROLLOUT_STEPS.smoke, { ok: true, latencyS: null }), 'smoke answered');
  assert.equal(noteOf(ROLLOUT_STEPS.smoke, { ok: false, error: 'x' }), null);
  assert.equal(stepNote('writeEnv', { written: false }, '5/9 write .env on n'), 'same identity: not written');
  assert.equal(stepNote('writeEnv', 'not an object'), null);
});

test("docs/ARCHITECTURE.md's step table is the catalog", () => {
  const doc = readFileSync(path.join(REPO_ROOT, 'docs', 'ARCHITECTURE.md'), 'utf8');
  const rows = doc.split('\n').filter((l) => /^\| (up|down|every deploy|rollback|rollout|watchdog) \|/.test(l));
  const want = TABLES.flatMap(([deploy, t]) =>
    Object.values(t).map((d) => `| ${deploy} | \`${d.step}\` | \`${d.activity}\` | ${d.label} | ${d.script ? `\`${d.script}.sh\`` : '—'} | ${d.preset} |`),
  );
  assert.deepEqual(rows, want);
});

test('a step that completes can still fail: preflight, verify and the rollout smoke gate say why, every other row passes', () => {
  const pre = { ok: false, checks: [{ name: 'mounts', ok: false, detail: '/models missing' }, { name: 'files', ok: true, detail: '' }] };
  assert.equal(verdictOf(UP_STEPS.preflight, pre), 'preflight failed: mounts: /models missing');
  assert.equal(verdictOf(UP_STEPS.preflight, { ...pre, ok: true }), null);
  const v = { ok: false, problems: ['served model is x, expected qwen38', 'max_model_len is 1, expected 2'] };
  assert.equal(verdictOf(UP_STEPS.verify, v), 'verify failed: served model is x, expected qwen38; max_model_len is 1, expected 2');
  assert.equal(verdictOf(UP_STEPS.verify, { ...v, ok: true }), null);
  // The CLI's step line reads the same verdict from history (so it prints ✗, never ✓, for a failed verify).
  assert.equal(stepVerdict('verifyServer', v, summaryOf(UP_STEPS.verify, 'spark2')), verdictOf(UP_STEPS.verify, v));
  // The gate's smoke: anything but an answer fails it (the rollout stops there).
  assert.equal(verdictOf(ROLLOUT_STEPS.smoke, { ok: false, error: 'HTTP 500', latencyS: null }), 'smoke failed: HTTP 500');
  assert.equal(verdictOf(ROLLOUT_STEPS.smoke, { ok: false, error: null }), 'smoke failed: ?');
  assert.equal(verdictOf(ROLLOUT_STEPS.smoke, { ok: true, latencyS: 1 }), null);
  const judged: StepDef[] = [UP_STEPS.preflight, UP_STEPS.verify, ROLLOUT_STEPS.smoke];
  for (const d of ALL) if (!judged.includes(d)) assert.equal(verdictOf(d, { ok: false }), null, d.label);
});
