/**
 * Real runs of the rollback workflows (replay fixtures): `pulse model rollback` to the backup an up wrote, and an
 * up with autoRollback whose server never becomes ready (the up's history and its rollbackWorkflow child's), on a
 * real Temporal dev server with the REAL activities on a simulated node over real sshd. Exports each history
 * (test/histories/ with PULSE_RECORD_HISTORIES=1) and proves no secret value is in any.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { WorkflowFailedError } from '@temporalio/client';
import { utc } from '../../runtime/format.js';
import type { DeployResult, NodeState, RollbackRequest } from '../../runtime/model/index.js';
import { ROLLBACK_WORKFLOW, rollbackChildId, SA_ACTION, SA_NODE, TASK_QUEUE, workflowIdFor } from '../../workflows/definitions.js';
import { quietRuntime } from '../workflows/harness.js';
import { exported, exportHistory, historiesWithSecrets } from './histories.js';
import { startRig } from './rig.js';
import type { Rig } from './rig.js';
import { until } from '../helpers/until.js';

function nodeState(rig: Rig, node: string): NodeState {
  return JSON.parse(readFileSync(path.join(rig.stateDir, 'nodes', `${node}.json`), 'utf8')) as NodeState;
}

describe('real rollback runs on the dev server and the simulator', () => {
  let rig: Rig;
  before(async () => {
    quietRuntime();
    rig = await startRig(['spark1']);
  });
  after(async () => {
    await rig?.close();
  });

  it('rollback to the backup of an up; an autoRollback up that never becomes ready rolls back in a child', async () => {
    const w = await rig.worker();
    const node = rig.sim.node('spark1');
    await w.runUntil(async () => {
      // datagen, then best: best's write backs up datagen's .env (pulse wrote it: it passes the header check).
      // Each render a second apart (backup names have second resolution): the rollback's stamp differs from best's.
      const t0 = Date.now();
      for (const [k, profile] of ['datagen', 'best'].entries()) {
        const r = (await (await rig.start(rig.upPlan('spark1', profile, { now: new Date(t0 + k * 1000) }))).result()) as DeployResult;
        assert.equal(r.ok, true, r.error ?? '');
      }
      const backup = path.join(path.dirname(node.envPath), rig.backups('spark1').sort().at(-1) ?? '');
      const datagenEnv = readFileSync(backup, 'utf8');
      const request: RollbackRequest = { action: 'rollback', version: 1, node: 'spark1', backup, confirmed: true, force: false, renderedAt: utc(new Date(t0 + 2000)), undid: null, timeoutS: null };
      const h1 = await rig.client.workflow.start(ROLLBACK_WORKFLOW, {
        args: [request], taskQueue: TASK_QUEUE, workflowId: workflowIdFor('spark1'),
        typedSearchAttributes: [{ key: SA_NODE, value: 'spark1' }, { key: SA_ACTION, value: 'rollback' }], staticSummary: 'rollback on spark1',
      });
      const r1 = (await h1.result()) as DeployResult;
      await exportHistory(rig.client, h1.workflowId, h1.firstExecutionRunId, 'rollback-success');
      assert.equal(r1.ok, true, r1.error ?? '');
      assert.equal(r1.profile, 'datagen');
      assert.equal(r1.restoredFrom, backup);
      assert.equal(readFileSync(node.envPath, 'utf8'), datagenEnv, 'the exact bytes of the backup');
      assert.equal(nodeState(rig, 'spark1').profile, 'datagen');

      node.setFailure('never-ready');
      const plan = { ...rig.upPlan('spark1', 'best', { timeoutS: 6, now: new Date(t0 + 3000) }), autoRollback: true };
      const starting = node.startShCalls().length;
      const h2 = await rig.start(plan);
      // The simulated vLLM reads its control at start, before it logs its args: once the up's server logged them,
      // the next one (the child's) is healthy.
      const logs = (): string => {
        try {
          return node.docker('logs', node.containerName);
        } catch {
          return ''; // no container yet
        }
      };
      await until('the never-ready server started', () => node.startShCalls().length > starting && logs().includes('non-default args'), 120_000);
      node.setFailure('none');
      const err = await h2.result().then(() => null, (e: unknown) => e);
      assert.ok(err instanceof WorkflowFailedError, `expected a failed up, got ${String(err)}`);
      const result = (err.cause as { details?: unknown[] } | undefined)?.details?.[0] as DeployResult;
      await exportHistory(rig.client, h2.workflowId, h2.firstExecutionRunId, 'up-never-ready-auto-rollback');
      const child = rig.client.workflow.getHandle(rollbackChildId(h2.workflowId));
      const childResult = (await child.result()) as DeployResult;
      await exportHistory(rig.client, child.workflowId, (await child.describe()).runId, 'rollback-auto-child');
      assert.equal(result.errorType, 'Timeout');
      assert.equal(result.rollback?.ok, true, result.rollback?.error ?? '');
      assert.equal(result.rollback?.profile, 'datagen');
      assert.equal(childResult.ok, true, childResult.error ?? '');
      assert.equal(childResult.undid, `${h2.workflowId}/${h2.firstExecutionRunId}`);
      assert.equal(nodeState(rig, 'spark1').state, 'up');
      assert.equal(nodeState(rig, 'spark1').profile, 'datagen');
    });
  });

  it('no API_KEY or HF_TOKEN value appears in any exported history', () => {
    assert.deepEqual(exported.map((h) => h.name), ['rollback-success', 'up-never-ready-auto-rollback', 'rollback-auto-child']);
    assert.deepEqual(historiesWithSecrets(), []);
  });
});
