/**
 * The one failure table (runtime/failures.ts): the released retry policies stay as recorded in saved histories,
 * every ApplicationFailure type maps back to one kind, and the exit codes are the documented ones.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { DEPLOY_CANCELLED, FAILURES, NON_RETRYABLE_FAILURES, exitCodeLines, kindOfType, retryable, type FailureKind } from '../../runtime/failures.js';
import { REPO_ROOT } from '../helpers/paths.js';

const kinds = Object.keys(FAILURES) as FailureKind[];

test('failures: the preset rows are exactly the released nonRetryableErrorTypes', () => {
  const preset = new Set(kinds.filter((k) => FAILURES[k].retry === 'preset').map((k) => FAILURES[k].type));
  assert.deepEqual([...preset].sort(), [...NON_RETRYABLE_FAILURES].sort());
  // The order recorded in today's histories.
  assert.deepEqual(NON_RETRYABLE_FAILURES, ['ConfigError', 'PreconditionFailed', 'Refused', 'Timeout', 'VerifyFailed']);
});

test('failures: every saved history records the same nonRetryableErrorTypes', () => {
  const dir = path.join(REPO_ROOT, 'test/histories');
  const seen: string[][] = [];
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) if (k === 'nonRetryableErrorTypes') seen.push(x as string[]); else walk(x);
    }
  };
  for (const f of readdirSync(dir).filter((f) => f.endsWith('.json'))) walk(JSON.parse(readFileSync(path.join(dir, f), 'utf8')));
  assert.ok(seen.length > 10, 'the saved histories record retry policies');
  for (const types of seen) assert.deepEqual(types, NON_RETRYABLE_FAILURES);
});

test('failures: every type maps back to its kind; unknown types are internal', () => {
  for (const k of kinds) {
    const back = kindOfType(FAILURES[k].type);
    if (k === 'usage') assert.equal(back, 'config'); // one type, ConfigError, for both: a deploy's bad input is config
    else if (k === 'temporal') assert.equal(back, 'internal'); // a step never reaches Temporal: InternalError
    else assert.equal(back, k);
  }
  assert.equal(kindOfType(DEPLOY_CANCELLED), 'cancelled');
  assert.equal(kindOfType('SomethingNew'), 'internal');
  assert.equal(kindOfType(null), 'internal');
  assert.equal(kindOfType('toString'), 'internal');
});

test('failures: a temporary node failure is retried but is not "unreachable"', () => {
  assert.equal(retryable('temporary', 1), true);
  assert.notEqual(FAILURES.temporary.exit, FAILURES.unreachable.exit);
  assert.notEqual(FAILURES.temporary.type, FAILURES.unreachable.type);
  assert.doesNotMatch(FAILURES.temporary.message, /unreachable/);
});

test('failures: script failures stop at the third attempt; the rest follow their decision', () => {
  assert.deepEqual([1, 2, 3].map((a) => retryable('script', a)), [true, true, false]);
  for (const k of kinds) if (FAILURES[k].retry === 'preset' || FAILURES[k].retry === 'activity') assert.equal(retryable(k, 1), false, k);
});

test('failures: the exit codes are the documented ones, each listed once in --help', () => {
  const codes = Object.fromEntries(kinds.map((k) => [k, FAILURES[k].exit]));
  assert.deepEqual(codes, {
    internal: 1, usage: 2, config: 3, refused: 4, precondition: 5, unreachable: 6, 'not-ready': 7, timeout: 8, script: 9, verify: 9,
    temporal: 10, unauthorized: 11, temporary: 12, cancelled: 13, 'docker-down': 14,
  });
  const lines = exitCodeLines();
  assert.deepEqual(lines.map((l) => Number(l.trim().split(/\s+/)[0])), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 130]);
});
