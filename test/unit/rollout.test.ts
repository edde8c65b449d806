/**
 * runtime/fleet/rollout.ts: the order of --all, the request check the worker runs (names only; protected nodes need the
 * one --yes), each node's plan as a single up makes it (so the child's plan check accepts it), and the
 * availability guard on a gateway file's endpoints, step by step.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { loadNodesConfig } from '../../runtime/config/nodes.js';
import { loadProfiles } from '../../runtime/config/profiles.js';
import { ownUpPlan } from '../../runtime/plan/plan-check.js';
import { awaitingTunnelProbe, checkRolloutRequest, guardVerdict, nodePlanOf, plannedSteps, reservationHolds, rolloutIdFor, rolloutOrder, type Reservation } from '../../runtime/fleet/rollout.js';
import { writeNodeState } from '../../runtime/state/state.js';
import { writeTunnelHealth, type TunnelHealth } from '../../runtime/gateway/tunnel/health.js';
import type { NodeState, RolloutRequest, UpPlan } from '../../runtime/model/index.js';
import { removeDir, tempDir } from '../helpers/cli.js';
import { REPO_ROOT } from '../helpers/paths.js';

const NOW = new Date('2026-09-23T10:15:00Z');
const config = loadNodesConfig(path.join(REPO_ROOT, 'test', 'fixtures', 'nodes', 'fleet.json'));
const profiles = loadProfiles(path.join(REPO_ROOT, 'runtime', 'qwen38', 'profiles'));
const req = (over: Partial<RolloutRequest> = {}): RolloutRequest => ({
  action: 'up', version: 1, profile: 'best', nodes: ['spark2', 'spark3'], confirmed: false, experimental: false, restart: false,
  autoRollback: false, allowOutage: false, maxParallel: 1, timeoutS: null, minMemGib: null, verbose: false, ...over,
});
const ep = (name: string, enabled: boolean, reason?: string) => ({ name, baseUrl: `http://${name}/v1`, enabled, ...(reason ? { reason } : {}) });

test('--all: unprotected nodes first, protected last; the ID names the node set whatever the order', () => {
  assert.deepEqual(rolloutOrder(config, 'all'), ['spark2', 'spark3', 'spark1']);
  assert.deepEqual(rolloutOrder(config, ['spark1', 'spark2']), ['spark1', 'spark2'], 'as given');
  assert.equal(rolloutIdFor(['spark2', 'spark1']), rolloutIdFor(['spark1', 'spark2']));
});

test('the request check refuses a protected node without --yes (naming it), unknown nodes, a repeated node, a bad profile or flag', () => {
  assert.throws(() => checkRolloutRequest(config, profiles, req({ nodes: ['spark2', 'spark1'] })), /spark1 is protected; add --yes \(once/);
  assert.equal(checkRolloutRequest(config, profiles, req({ nodes: ['spark2', 'spark1'], confirmed: true })).nodes.length, 2);
  assert.throws(() => checkRolloutRequest(config, profiles, req({ nodes: ['spark2', 'spark9'] })), /spark9 not in/);
  assert.throws(() => checkRolloutRequest(config, profiles, req({ nodes: ['spark2', 'spark2'] })), /named twice/);
  assert.throws(() => checkRolloutRequest(config, profiles, req({ profile: 'nope' })), /profile "nope"/);
  assert.throws(() => checkRolloutRequest(config, profiles, req({ maxParallel: 0 })), /maxParallel/);
  assert.throws(() => checkRolloutRequest(config, profiles, { ...req(), plan: 1, allowOutage: 'yes' }), /allowOutage is not true or false/);
  assert.throws(() => checkRolloutRequest(config, profiles, req({ action: 'down' })), /profile "best"/, 'a down names no profile');
});

test("each node's plan is the one the worker's plan check accepts, with the rollout's flags", () => {
  const plan = nodePlanOf(config, profiles, req({ restart: true, autoRollback: true }), 'spark2', null, NOW) as UpPlan;
  assert.equal(plan.restart, true);
  assert.equal(plan.autoRollback, true);
  const files = { config, profiles, nodesMtimeMs: null, profileMtimeMs: new Map<string, number>() };
  assert.equal(ownUpPlan(files, JSON.parse(JSON.stringify(plan))).node, 'spark2');
  assert.throws(() => nodePlanOf(config, profiles, req(), 'spark1', null, NOW), /protected/);
});

test('the guard counts the endpoints that stay enabled besides the step; the fallback-kept one does not count', () => {
  const eps = [ep('spark1', true), ep('spark2', false), ep('spark3', true)];
  assert.deepEqual(guardVerdict(eps, ['spark3'], false), { serving: ['spark1'], refused: null });
  assert.match(guardVerdict(eps, ['spark1', 'spark3'], false).refused ?? '', /no enabled endpoint.*--allow-outage/);
  assert.equal(guardVerdict(eps, ['spark1', 'spark3'], true).refused, null);
  const fallback = [ep('spark1', true, 'kept enabled by the fallback: state failed'), ep('spark3', true)];
  assert.ok(guardVerdict(fallback, ['spark3'], false).refused, 'a fallback endpoint is not serving');
});

test('the guard refuses only a step that takes away the last endpoint that serves; a node that counts as down never serves', () => {
  const none = [ep('spark1', true, 'kept enabled by the fallback: state down'), ep('spark2', false), ep('spark3', false)];
  assert.equal(guardVerdict(none, ['spark3'], false).refused, null, 'nothing serves yet: taking spark3 down takes nothing away');
  assert.equal(guardVerdict(none, ['spark1'], false).refused, null, 'the fallback-kept endpoint does not serve either');
  const two = [ep('spark1', true), ep('spark2', false), ep('spark3', true)];
  // spark1 has a deploy running (or another rollout reserved it): it does not serve, so spark3 is the last one.
  assert.match(guardVerdict(two, ['spark3'], false, new Set(['spark1'])).refused ?? '', /spark3 down would leave the model with no enabled endpoint that serves/);
  assert.equal(guardVerdict(two, ['spark1'], false, new Set(['spark1'])).refused, null, 'spark1 is down already: spark3 still serves');
  assert.deepEqual(guardVerdict(two, ['spark1'], false, new Set(['spark3'])).serving, []);
  assert.match(guardVerdict(two, ['spark1'], false, new Set(['spark3'])).refused ?? '', /taking spark1 down/, 'spark3 counts as down: spark1 is the last');
});

test("a reservation holds while its rollout is open and the node's deploy it admitted has not ended", () => {
  const r: Reservation = { node: 'spark2', owner: { workflowId: 'pulse-rollout-spark2', runId: 'r1' }, deployRunId: 'old', at: '2026-12-04T00:00:00Z' };
  assert.equal(reservationHolds(r, false, null), false, 'its rollout closed (terminated, crashed for good): stale');
  assert.equal(reservationHolds(r, true, { runId: 'old', running: false }), true, 'the step has not started its deploy yet');
  assert.equal(reservationHolds(r, true, { runId: 'new', running: true }), true, 'its deploy runs');
  assert.equal(reservationHolds(r, true, { runId: 'new', running: false }), false, 'its deploy ended: spent');
  assert.equal(reservationHolds({ ...r, deployRunId: null }, true, null), true, 'no deploy ever ran on the node, none yet');
});

test('the planned steps: a node that came up serves again when the gateway reaches it; the guard stops the plan at a refused step', () => {
  // spark3 (BIND 0.0.0.0) is reachable; spark2 (loopback, not the gateway node) is not.
  const eps = [ep('spark1', false), ep('spark2', false), ep('spark3', true)];
  const steps = plannedSteps(config, eps, req({ nodes: ['spark3', 'spark2'], allowOutage: true }));
  assert.deepEqual(steps.map((s) => [s.nodes, s.serving]), [[['spark3'], []], [['spark2'], ['spark3']]]);
  const refused = plannedSteps(config, eps, req({ nodes: ['spark3', 'spark2'] }));
  assert.equal(refused.length, 1);
  assert.ok(refused[0]?.refused);
});

test('the guard waits only for a tunnelled node that is up with its link connected and lacks only a probe since it came up', async () => {
  const dir = await tempDir('pulse-rollout-probe-');
  try {
    const fleet = [{ node: 'spark1', gatewayUrl: 'http://spark1/v1', reachable: true }, { node: 'spark2', gatewayUrl: 'http://x/v1', reachable: false, tunnel: { localPort: 18002, url: 'http://127.0.0.1:18002/v1' } }];
    const eps = [ep('spark1', true), ep('spark2', false, 'no answer through the tunnel: connection refused')];
    const link = (connected: boolean, ok: boolean): TunnelHealth => ({
      pid: process.pid, startedAt: 't0', updatedAt: 't1',
      nodes: { spark2: { localPort: 18002, remote: '127.0.0.1:8000', listening: true, connected, connectedSince: 't0', probe: { ok, at: 't1', detail: 'x' }, lastError: null, lastErrorAt: null, reconnects: 0 } },
    });
    const up = (s: NodeState['state']): NodeState => ({
      node: 'spark2', state: s, action: 'up', profile: 'best', identity: null, workflowId: 'w', runId: 'r', at: 't2', backupPath: null, logPath: null,
      kvCacheLine: null, maxModelLen: null, servedModelName: null, overlayManifest: null, error: null, previousProfile: null,
    } as NodeState);
    await writeNodeState(dir, up('up'));
    writeTunnelHealth(dir, link(true, false));
    assert.deepEqual(awaitingTunnelProbe(dir, fleet, eps, ['spark1']), ['spark2'], 'up, link connected, the last probe from its restart');
    assert.deepEqual(awaitingTunnelProbe(dir, fleet, eps, ['spark2']), [], 'a node of the step itself is not waited for');
    writeTunnelHealth(dir, link(false, false));
    assert.deepEqual(awaitingTunnelProbe(dir, fleet, eps, ['spark1']), [], 'a link that is down: no probe will answer soon');
    writeTunnelHealth(dir, link(true, false));
    await writeNodeState(dir, up('failed'));
    assert.deepEqual(awaitingTunnelProbe(dir, fleet, eps, ['spark1']), [], 'a failed node stays disabled whatever the probe says');
  } finally {
    await removeDir(dir);
  }
});
