/**
 * Real runs: upWorkflow/downWorkflow on a real Temporal dev server with the REAL activities on simulated nodes over
 * real sshd. up best (full), up best again (same identity: steps 1, 7, 8, 9), down, and an up whose server never
 * becomes ready (compensation), and a cancelled up (compensation). Exports each history (replay fixtures) and proves no secret value is in any.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { WorkflowExecutionAlreadyStartedError, WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { PROGRESS_QUERY } from '../../workflows/definitions.js';
import type { DeployProgress, DeployResult, NodeState } from '../../runtime/model/index.js';
import { quietRuntime } from '../workflows/harness.js';
import { exported, exportHistory, historiesWithSecrets } from './histories.js';
import { SECRETS, startRig } from './rig.js';
import type { Rig } from './rig.js';

function nodeState(rig: Rig, node: string): NodeState {
  return JSON.parse(readFileSync(path.join(rig.stateDir, 'nodes', `${node}.json`), 'utf8')) as NodeState;
}

function endpointEnabled(rig: Rig, node: string): boolean | undefined {
  const f = JSON.parse(readFileSync(path.join(rig.stateDir, 'gateway-backends.json'), 'utf8')) as { models: { endpoints: { name: string; enabled: boolean }[] }[] };
  return f.models[0]?.endpoints.find((e) => e.name === node)?.enabled;
}

async function failureOf(p: Promise<unknown>): Promise<{ failure: ApplicationFailure; result: DeployResult }> {
  const err = await p.then(() => null, (e: unknown) => e);
  assert.ok(err instanceof WorkflowFailedError, `expected a failed workflow, got ${String(err)}`);
  assert.ok(err.cause instanceof ApplicationFailure);
  return { failure: err.cause, result: err.cause.details?.[0] as DeployResult };
}

describe('real runs on the dev server and the simulator', () => {
  let rig: Rig;
  before(async () => {
    quietRuntime();
    rig = await startRig(['spark1', 'spark2']);
  });
  after(async () => {
    await rig?.close();
  });

  it('up best (full), up best again (same identity), down; then a never-ready up compensates, a cancelled up compensates', async () => {
    const w = await rig.worker();
    const node = rig.sim.node('spark2');
    await w.runUntil(async () => {
      const h1 = await rig.start(rig.upPlan('spark2', 'best'));
      const r1 = (await h1.result()) as DeployResult;
      await exportHistory(rig.client, h1.workflowId, h1.firstExecutionRunId, 'up-full-success');
      assert.equal(r1.ok, true, r1.error ?? '');
      assert.equal(r1.mode, 'full');
      assert.equal(nodeState(rig, 'spark2').state, 'up');
      assert.equal(node.startShCalls().length, 1);
      assert.equal(rig.backups('spark2').length, 1);
      assert.equal(r1.backupPath, path.join(path.dirname(node.envPath), rig.backups('spark2')[0] ?? ''));
      assert.match(readFileSync(node.envPath, 'utf8'), new RegExp(`API_KEY="${SECRETS.API_KEY}"`)); // carried (normalised), not printed

      const h2 = await rig.start(rig.upPlan('spark2', 'best'));
      const r2 = (await h2.result()) as DeployResult;
      await exportHistory(rig.client, h2.workflowId, h2.firstExecutionRunId, 'up-same-identity');
      assert.equal(r2.mode, 'same-identity');
      // The node lock is taken before preflight and released after publish (runtime/scripts/lock.sh).
      assert.deepEqual(r2.steps.map((s) => s.step), ['check', 'lock', 'preflight', 'readiness', 'verify', 'publish', 'unlock']);
      assert.equal(node.startShCalls().length, 1);

      const h3 = await rig.start(rig.downPlan('spark2'));
      const r3 = (await h3.result()) as DeployResult;
      await exportHistory(rig.client, h3.workflowId, h3.firstExecutionRunId, 'down-success');
      assert.equal(r3.ok, true, r3.error ?? '');
      assert.equal(nodeState(rig, 'spark2').state, 'down');

      node.setFailure('never-ready');
      const h4 = await rig.start(rig.upPlan('spark2', 'datagen', { timeoutS: 3 }));
      const { failure, result } = await failureOf(h4.result());
      await exportHistory(rig.client, h4.workflowId, h4.firstExecutionRunId, 'up-never-ready-compensated');
      assert.equal(failure.type, 'DeployFailed');
      assert.equal(result.errorType, 'Timeout');
      assert.equal(result.compensated, true);
      assert.equal(result.rollbackCommand, 'pulse model up best --node spark2');
      assert.ok(result.backupPath?.includes('.env.pulse-bak-'));
      const st = nodeState(rig, 'spark2');
      assert.equal(st.state, 'failed');
      assert.match(st.error ?? '', /readiness/);
      assert.equal(endpointEnabled(rig, 'spark2'), false);

      // Cancel during a long readiness wait: the probe is aborted, the node is marked failed, DeployCancelled.
      const h5 = await rig.start(rig.upPlan('spark2', 'best', { timeoutS: 600 }));
      while ((await h5.query<DeployProgress>(PROGRESS_QUERY)).step !== 'readiness') await new Promise((r) => setTimeout(r, 200));
      const busy = await rig.start(rig.downPlan('spark2')).then(() => null, (e: unknown) => e);
      assert.ok(busy instanceof WorkflowExecutionAlreadyStartedError, 'the workflow ID locks the node');
      await h5.cancel();
      const cancelled = await failureOf(h5.result());
      await exportHistory(rig.client, h5.workflowId, h5.firstExecutionRunId, 'up-cancelled-compensated');
      assert.equal(cancelled.failure.type, 'DeployCancelled');
      assert.equal(cancelled.result.errorType, 'Cancelled');
      assert.equal(cancelled.result.compensated, true);
      assert.equal(cancelled.result.rollbackCommand, 'pulse model up datagen --node spark2');
      assert.equal(nodeState(rig, 'spark2').state, 'failed');
    });
  });

  it('no API_KEY or HF_TOKEN value appears in any exported history', () => {
    assert.equal(exported.length, 5);
    assert.deepEqual(historiesWithSecrets(), []);
  });
});
