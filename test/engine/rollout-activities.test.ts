/**
 * The rollout's activities as the worker runs them (MockActivityEnvironment, the fixture worker's own files: spark1
 * protected): the worker refuses a request that names a protected node without the one --yes, or a node outside
 * the rollout, whoever started the workflow; it plans a node exactly as the single up's plan check accepts; the
 * guard reads the gateway file of its own state dir.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { MockActivityEnvironment } from '@temporalio/testing';
import { rolloutActivities } from '../../activities/rollout.js';
import type { WorkflowRuns } from '../../activities/deps.js';
import type { DeployRun } from '../../runtime/fleet/rollout.js';
import { ownUpPlan } from '../../runtime/plan/plan-check.js';
import type { DownPlan, GuardVerdict, RolloutRequest, UpPlan } from '../../runtime/model/index.js';
import { fakeDeps, FIXTURE_FILES } from '../workflows/fake-deps.js';

const req = (over: Partial<RolloutRequest> = {}): RolloutRequest => ({
  action: 'up', version: 1, profile: 'best', nodes: ['spark2', 'spark1'], confirmed: false, experimental: false, restart: false,
  autoRollback: false, allowOutage: false, maxParallel: 1, timeoutS: null, minMemGib: null, verbose: false, ...over,
});

test('the worker refuses a protected node without --yes and a node outside the rollout; it plans what the plan check accepts', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pulse-rollout-acts-'));
  try {
    const acts = rolloutActivities(fakeDeps({}, { stateDir: dir }).deps);
    const env = new MockActivityEnvironment();
    await assert.rejects(env.run(acts.planRolloutNode, { request: req(), node: 'spark2' }), /spark1 is protected; add --yes/);
    await assert.rejects(env.run(acts.guardRolloutStep, { request: req(), nodes: ['spark2'] }), /spark1 is protected/);
    await assert.rejects(env.run(acts.planRolloutNode, { request: req({ nodes: ['spark2'] }), node: 'spark3' }), /not in this rollout/);
    const forged = { ...req({ nodes: ['spark2'] }), nodes: 'spark2' } as unknown as RolloutRequest;
    await assert.rejects(env.run(acts.planRolloutNode, { request: forged, node: 'spark2' }), /not a list of node names/);
    const out: UpPlan | DownPlan = await env.run(acts.planRolloutNode, { request: req({ confirmed: true }), node: 'spark1' });
    assert.equal(out.action, 'up');
    const plan = out as UpPlan;
    assert.equal(plan.confirmed, true);
    assert.equal(ownUpPlan(FIXTURE_FILES.load(), JSON.parse(JSON.stringify(plan))).node, 'spark1', "the child's plan check accepts it");
    writeFileSync(path.join(dir, 'gateway-backends.json'), JSON.stringify({ models: [{ endpoints: [{ name: 'spark1', baseUrl: 'u', enabled: true }, { name: 'spark2', baseUrl: 'u', enabled: false }] }] }));
    const g: GuardVerdict = await env.run(acts.guardRolloutStep, { request: req({ confirmed: true }), nodes: ['spark1'] });
    assert.deepEqual(g.serving, []);
    assert.match(g.refused ?? '', /no enabled endpoint/);
    const g2: GuardVerdict = await env.run(acts.guardRolloutStep, { request: req({ confirmed: true }), nodes: ['spark2'] });
    assert.deepEqual(g2.serving, ['spark1']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("two rollouts' guards are serialised by a reservation: the second never counts the first one's node as serving", async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pulse-rollout-reserve-'));
  try {
    // spark2 and spark3 serve (spark1 is protected and not in these rollouts).
    writeFileSync(path.join(dir, 'gateway-backends.json'), JSON.stringify({ models: [{ endpoints: [
      { name: 'spark1', baseUrl: 'u', enabled: false, reason: 'state down' }, { name: 'spark2', baseUrl: 'u', enabled: true }, { name: 'spark3', baseUrl: 'u', enabled: true }] }] }));
    // What Temporal says: the deploys of each node (latest run) and which rollouts are open.
    const deploys = new Map<string, DeployRun | null>();
    const open = new Set(['pulse-rollout-A/a1', 'pulse-rollout-B/b1']);
    const runs: WorkflowRuns = { latest: async (n) => deploys.get(n) ?? null, open: async (w, r) => open.has(`${w}/${r}`) };
    const acts = rolloutActivities(fakeDeps({}, { stateDir: dir, workflowRuns: runs }).deps);
    const as = (workflowId: string, runId: string) => new MockActivityEnvironment({ workflowExecution: { workflowId, runId } });
    const guard = async (env: MockActivityEnvironment, node: string): Promise<GuardVerdict> =>
      (await env.run(acts.guardRolloutStep, { request: req({ nodes: [node] }), nodes: [node] })) as GuardVerdict;
    const A = as('pulse-rollout-A', 'a1');
    const B = as('pulse-rollout-B', 'b1');
    assert.deepEqual(await guard(A, 'spark2'), { serving: ['spark3'], refused: null });
    // B's step takes spark3: the file still shows spark2 enabled, but A reserved it, so spark3 is the last one.
    assert.match((await guard(B, 'spark3')).refused ?? '', /spark3 down would leave the model with no enabled endpoint that serves/);
    // A's deploy on spark2 runs: still not serving.
    deploys.set('spark2', { runId: 'd1', running: true });
    assert.ok((await guard(B, 'spark3')).refused);
    // It ended (the node is up again): the reservation is spent, B goes.
    deploys.set('spark2', { runId: 'd1', running: false });
    assert.deepEqual(await guard(B, 'spark3'), { serving: ['spark2'], refused: null });
    // B's own reservation of spark3 now keeps A's next step (spark2) out, until B's rollout is gone (terminated): stale.
    assert.ok((await guard(A, 'spark2')).refused);
    open.delete('pulse-rollout-B/b1');
    assert.deepEqual(await guard(A, 'spark2'), { serving: ['spark3'], refused: null });
    const file = JSON.parse(readFileSync(path.join(dir, 'rollout-reservations.json'), 'utf8')) as { reservations: { node: string; owner: { workflowId: string } }[] };
    assert.deepEqual(file.reservations.map((r) => `${r.owner.workflowId}:${r.node}`), ['pulse-rollout-A:spark2'], 'the stale one is gone, A holds spark2');
    // A node whose deploy workflow is open (a plain up, a heal) never serves, reservation or not.
    deploys.set('spark3', { runId: 'u1', running: true });
    assert.equal((await guard(as('pulse-rollout-C', 'c1'), 'spark2')).refused, null, 'spark2 is reserved, spark3 busy: taking spark2 again takes nothing away');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
