/** The same-identity rule as a pure function (the sim tests cover it end to end over ssh and local). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decideSkip, diffEnv } from '../../runtime/steps/index.js';
import { startedEpoch } from '../../runtime/steps/preflight.js';
import type { PreflightReport, UpPlan } from '../../runtime/model/index.js';
import { createHash } from 'node:crypto';

const identity = { sha256: 'a'.repeat(64), profile: 'best', overlay: 'none' };
const plan = { env: { identity }, restart: false } as unknown as UpPlan;
type Facts = Omit<PreflightReport, 'ok' | 'sameIdentityRunning' | 'restartReason'>;
const started = '2026-09-23T10:15:00.500000000Z';
const t = Date.parse('2026-09-23T10:15:00Z') / 1000;
const facts = (patch: Partial<Facts> = {}): Facts => ({
  checks: [], diff: { added: [], removed: [], changed: [] }, currentIdentity: identity, currentBodyMatches: true, envCtime: t - 60,
  container: { name: 'c', running: true, status: 'running', image: 'i', startedAt: started },
  mountCtimes: [{ path: '/m', ctime: t - 10 }], openConnections: 0, otherVllmContainers: [], ...patch,
});

test('same identity, running, started after the .env and every mounted file: skip', () => {
  assert.deepEqual(decideSkip(plan, facts()), { same: true, reason: null });
});

test('each exception restarts, with a reason', () => {
  const cases: [Partial<Facts> | 'restart', RegExp | null][] = [
    [{ currentIdentity: { ...identity, profile: 'datagen' } }, null],
    [{ currentIdentity: { ...identity, overlay: '/o overlay-sha256=1' } }, null],
    [{ currentIdentity: null }, null],
    [{ container: null }, null],
    [{ container: { ...facts().container!, running: false } }, null],
    ['restart', /--restart/],
    [{ currentBodyMatches: false }, /edited after the render/],
    [{ container: { ...facts().container!, startedAt: '0001-01-01T00:00:00Z' } }, /start time is unknown/],
    [{ envCtime: t + 0.7 }, /\.env changed after the container started/],
    [{ mountCtimes: [{ path: '/m', ctime: t - 10 }, { path: '/shard', ctime: t + 0.6 }] }, /mounted files changed .*: \/shard$/],
  ];
  for (const [patch, reason] of cases) {
    const p = patch === 'restart' ? ({ ...plan, restart: true } as UpPlan) : plan;
    const d = decideSkip(p, facts(patch === 'restart' ? {} : patch));
    assert.equal(d.same, false, JSON.stringify(patch));
    if (reason === null) assert.equal(d.reason, null);
    else assert.match(d.reason ?? '', reason);
  }
});

test('a ctime within the start second is compared with sub-second precision', () => {
  assert.equal(startedEpoch(started), t + 0.5);
  assert.equal(decideSkip(plan, facts({ envCtime: t + 0.4 })).same, true);
  assert.equal(decideSkip(plan, facts({ envCtime: t + 0.5 })).same, false);
});

test('diffEnv compares values by sha256 with white space normalised', () => {
  const h = (v: string): string => createHash('sha256').update(v).digest('hex');
  const current = new Map([['A', h('1')], ['B', h('-e X=1 -v /a:/b')], ['GONE', h('x')]]);
  assert.deepEqual(diffEnv(current, { A: '2', B: '  -e X=1\n  -v /a:/b\n', NEW: 'n' }), { added: ['NEW'], removed: ['GONE'], changed: ['A'] });
});
