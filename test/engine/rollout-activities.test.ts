/**
 * The rollout's activities as the worker runs them (MockActivityEnvironment, the fixture worker's own files: spark1
 * protected): the worker refuses a request that names a protected node without the one --yes, or a node outside
 * the rollout, whoever started the workflow; it plans a node exactly as the single up's plan check accepts; the
 * guard reads the gateway file of its own state dir.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { MockActivityEnvironment } from '@temporalio/testing';
import { rolloutActivities } from '../../activities/rollout.js';
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
