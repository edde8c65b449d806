/** The watchdog's pure rules (runtime/fleet/watchdog.ts): what a check means, the record's streak and endpoint, when to heal. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkOf, healDecision, judge, nextRecord, watchdogLine, watchdogRequestProblem, watchdogStatusRequest } from '../../runtime/fleet/watchdog.js';
import { healthOf } from '../../runtime/status/parse.js';
import type { NodeStatus } from '../../runtime/status/types.js';
import { disableReason } from '../../runtime/gateway/gateway.js';
import type { FleetEntry, NodeState, WatchdogCheck, WatchdogRecord, WatchdogRequest } from '../../runtime/model/index.js';

const STATE: NodeState = {
  node: 'spark2', state: 'up', action: 'up', profile: 'stable', identity: null, workflowId: 'w', runId: 'r', at: '2026-12-03T02:00:00Z', backupPath: null,
  logPath: null, kvCacheLine: null, maxModelLen: 262144, servedModelName: 'qwen38', overlayManifest: null, error: null, previousProfile: null,
};
const OK: WatchdogCheck = {
  node: 'spark2', answered: true, error: null, container: { name: 'vllm-qwen38', exists: true, running: true, state: 'running', restartCount: 0, exitMeaning: null },
  http: true, httpSkipped: null, httpStatus: 200, healthOk: true, healthRoute: 200, servedModels: ['qwen38'], maxModelLen: 262144, drift: false, envProfile: 'stable', memoryWarning: null, locked: null,
};
const DEAD: WatchdogCheck = { ...OK, container: { ...OK.container!, running: false, state: 'exited', exitMeaning: 'killed by SIGKILL' }, http: false, httpStatus: null, healthOk: false };
const REQ: WatchdogRequest = { action: 'watchdog', version: 1, node: 'spark2', everyS: 60, after: 3, heal: true, healsPerHour: 2, confirmed: false };

const at = (min: number): string => new Date(Date.parse('2026-12-03T02:14:00Z') + min * 60_000).toISOString();

function run(checks: WatchdogCheck[], start: WatchdogRecord | null = null, state: NodeState = STATE): WatchdogRecord {
  let rec = start;
  checks.forEach((c, i) => (rec = nextRecord(rec, judge(c, state), c, REQ, at(i))));
  return rec!;
}

test('judge: a dead container, a wrong model or max_model_len is down; a lock or a down deploy is skipped; drift is a note', () => {
  assert.deepEqual(judge(OK, STATE), { verdict: 'ok', reason: null, notes: [] });
  assert.equal(judge(DEAD, STATE).reason, 'container vllm-qwen38 is exited (killed by SIGKILL)');
  assert.equal(judge({ ...OK, servedModels: ['other'] }, STATE).reason, '/v1/models serves other, not qwen38');
  assert.equal(judge({ ...OK, maxModelLen: 1024 }, STATE).reason, '/v1/models says max_model_len 1024, the recorded profile 262144');
  assert.equal(judge({ ...OK, healthOk: false, httpStatus: 503 }, STATE).reason, '/v1/models answered HTTP 503');
  assert.equal(judge({ ...OK, locked: 'deploy x from h (up)' }, STATE).verdict, 'skipped');
  assert.equal(judge(DEAD, { ...STATE, state: 'down' }).verdict, 'skipped');
  assert.equal(judge(OK, null).verdict, 'skipped');
  assert.deepEqual(judge({ ...OK, drift: true }, STATE).notes, ['.env drift: edited after pulse rendered it']);
  const prot = judge({ ...OK, http: false, httpSkipped: 'not checked: protected node, no HTTP request without --yes', healthOk: false }, STATE);
  assert.equal(prot.verdict, 'ok', 'a protected node without --yes is judged by its container');
});

test('judge: /health not 200 is down though /v1/models serves the model (a dead engine); unasked /health judges as before', () => {
  const dead: WatchdogCheck = { ...OK, healthRoute: 503 };
  assert.deepEqual(judge(dead, STATE), { verdict: 'down', reason: 'engine not healthy: /health 503', notes: [] });
  assert.equal(judge({ ...OK, healthRoute: 0 }, STATE).reason, 'engine not healthy: /health answered nothing');
  assert.equal(judge({ ...OK, healthRoute: 200 }, STATE).verdict, 'ok');
  // "good" needs /health 200: a check over HTTP that did not ask it (an older worker's) is not good.
  assert.equal(judge({ ...OK, healthRoute: null }, STATE).reason, 'engine not healthy: /health not checked');
  assert.equal(judge({ ...OK, healthRoute: undefined }, STATE).verdict, 'down');
  assert.equal(judge({ ...OK, http: false, healthRoute: undefined }, STATE).verdict, 'ok', 'no HTTP allowed (protected, no --yes): the container alone');
  const rec = run([OK, dead, dead, dead]);
  assert.match(rec.disabled ?? '', /: engine not healthy: \/health 503$/);
  assert.deepEqual(watchdogStatusRequest({ node: 'spark2', confirmed: false }), { node: 'spark2', http: true, gpuProbe: false, yes: false, healthRoute: true });
});

test('checkOf: the status record\'s healthRoute reaches the check; a status run that did not ask leaves it null', () => {
  const b64 = Buffer.from(JSON.stringify({ data: [{ id: 'qwen38', max_model_len: 262144 }] })).toString('base64');
  const asked = healthOf({ kind: 'health', httpStatus: 200, body_b64: b64, detail: '', healthRoute: 503 }, null, 'qwen38');
  assert.deepEqual([asked.modelsOk, asked.ok], [true, false], '/v1/models answered, the engine is dead: not ok');
  assert.equal(asked.healthRoute, 503);
  const plain = healthOf({ kind: 'health', httpStatus: 200, body_b64: b64, detail: '' }, null, 'qwen38');
  assert.equal('healthRoute' in plain, false, 'status JSON keeps its shape when /health was not asked');
  const status = (health: NodeStatus['health']): NodeStatus => ({ node: 'spark2', answered: true, error: null, container: null, env: null, memory: null, lock: null, health } as unknown as NodeStatus);
  assert.equal(checkOf(status(asked)).healthRoute, 503);
  assert.equal(checkOf(status(plain)).healthRoute, null);
});

test('the endpoint goes off after N failed checks in a row and on again after N good ones; skipped checks count neither way', () => {
  const two = run([OK, DEAD, DEAD]);
  assert.equal(two.disabled, null);
  assert.equal(two.streak, 2);
  const three = run([OK, DEAD, DEAD, DEAD]);
  assert.equal(three.judged, 'down');
  assert.equal(three.since, at(1));
  assert.match(three.disabled ?? '', /^watchdog: 3 failed checks in a row since 2026-12-03T02:15:00.000Z: container vllm-qwen38 is exited/);
  const locked = nextRecord(three, judge({ ...OK, locked: 'deploy' }, STATE), OK, REQ, at(9));
  assert.equal(locked.streak, 3);
  assert.equal(locked.verdict, 'skipped');
  const back2 = run([OK, OK], three);
  assert.notEqual(back2.disabled, null, 'two good ones are not enough');
  assert.equal(run([OK, OK, OK], three).disabled, null);
  const fleet: FleetEntry = { node: 'spark2', gatewayUrl: 'http://h/v1', reachable: true } as FleetEntry;
  assert.match(disableReason(fleet, { ...STATE, watchdog: three }) ?? '', /^watchdog: 3 failed checks/);
  assert.equal(disableReason(fleet, { ...STATE, watchdog: run([OK, OK, OK], three) }), null);
});

test('heal: after N failed checks, N more after each heal, growing pauses, at most K an hour, then it stops; protected needs --yes', () => {
  let rec = run([OK, DEAD, DEAD, DEAD]);
  assert.deepEqual(healDecision(rec, { ...REQ, heal: false }, false, rec.at), { heal: false, why: null });
  assert.match((healDecision(rec, REQ, true, rec.at) as { why: string }).why, /protected: the watchdog heals it only when `on` was given --yes/);
  assert.deepEqual(healDecision(rec, REQ, false, rec.at), { heal: true });
  rec = { ...rec, heals: [rec.at], healsTotal: 1, sinceHeal: 0 };
  // Three more failed checks, one a minute: N after the heal, but the pause after the first heal is N intervals (3 min).
  for (let i = 4; i <= 6; i++) rec = nextRecord(rec, judge(DEAD, STATE), DEAD, REQ, at(i));
  assert.deepEqual(healDecision(rec, REQ, false, rec.at), { heal: true });
  rec = { ...rec, heals: [...rec.heals, rec.at], healsTotal: 2, sinceHeal: 0 };
  for (let i = 7; i <= 12; i++) rec = nextRecord(rec, judge(DEAD, STATE), DEAD, REQ, at(i));
  const spent = healDecision(rec, REQ, false, rec.at);
  assert.equal(spent.heal, false);
  assert.match((spent as { gaveUp?: string }).gaveUp ?? '', /^heal budget spent: 2 heal\(s\) in the last hour \(at most 2\), still down: container/);
  const wider = { ...REQ, healsPerHour: 3 };
  rec = { ...rec, heals: [at(11)], sinceHeal: 3 };
  assert.match((healDecision(rec, wider, false, at(12)) as { why: string }).why, /^next heal in \d+ s at the earliest/);
  // An hour later the old heals no longer count.
  const later = nextRecord({ ...rec, heals: [at(3), at(6)] }, judge(DEAD, STATE), DEAD, REQ, at(70));
  assert.deepEqual(later.heals, []);
});

test('the status line and the request check', () => {
  const now = new Date(Date.parse(at(3)) + 180_000);
  assert.equal(watchdogLine(run([OK]), new Date(Date.parse(at(0)) + 180_000)), 'ok 3 min ago');
  assert.match(watchdogLine(run([OK, DEAD, DEAD, DEAD, DEAD, DEAD]), now), /^down since 02:15, 5 checks: container vllm-qwen38 is exited \(killed by SIGKILL\); endpoint disabled$/);
  assert.equal(watchdogRequestProblem(REQ), null);
  assert.match(watchdogRequestProblem({ ...REQ, everyS: 1 }) ?? '', /everyS/);
  assert.match(watchdogRequestProblem({ ...REQ, node: 3 }) ?? '', /node/);
  assert.match(watchdogRequestProblem({ ...REQ, clear: false }) ?? '', /clear/);
});

test('watchdog list: a header, then one row a schedule with times in the one UTC format (no .000Z)', async () => {
  const { listTable } = await import('../../cli/commands/watchdog.js');
  const rows = listTable([
    { node: 'spark2', schedule: 'pulse-watchdog-spark2', everyS: 60, heal: true, after: 2, confirmed: false, nextRun: '2026-12-04T03:01:00.000Z', paused: false, record: null },
    { node: 'spark1', schedule: 'pulse-watchdog-spark1', everyS: 300, heal: true, after: 3, confirmed: true, nextRun: null, paused: true, record: null },
  ], new Date('2026-12-04T03:00:00Z'));
  assert.match(rows[0] ?? '', /^NODE +EVERY +AFTER +HEAL +NEXT \(UTC\) +LAST VERDICT$/);
  assert.match(rows[1] ?? '', /^spark2 +1m00s +2 +yes +2026-12-04T03:01:00Z +no check yet$/);
  assert.match(rows[2] ?? '', /^spark1 +5m00s +3 +yes \(--yes\) +PAUSED +no check yet$/);
  assert.doesNotMatch(rows.join('\n'), /\.000Z/);
});
