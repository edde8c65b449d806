/** The failure block of --json (cli/failure-block.ts failureJson): the text block's facts as fields. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { failureBlockLines, failureJson } from '../../cli/failure-block.js';
import type { FailureFacts } from '../../cli/failure-block.js';
import type { DeployResult } from '../../runtime/model/index.js';
import type { NodeStatus } from '../../runtime/status/types.js';

const failed: DeployResult = {
  ok: false, node: 'spark2', action: 'up', profile: 'best', mode: 'full', state: 'failed', backupPath: '/r/.env.pulse-bak-20261203T100000Z',
  rollbackCommand: 'pulse model up datagen --node spark2', error: 'readiness: not ready after 3 s', warnings: [], clientNotes: [],
  steps: [{ step: 'preflight', ok: true, ms: 10 }, { step: 'readiness', ok: false, ms: 3000 }, { step: 'compensate', ok: true, ms: 5 }],
  errorType: 'Timeout', compensated: true,
};

const facts: FailureFacts = {
  node: 'spark2',
  status: { answered: true, container: { name: 'vllm-qwen38', exists: true, running: true, state: 'running', exitMeaning: null }, memory: { availableGiB: 40.5, totalGiB: 119.7 } } as unknown as NodeStatus,
  startLog: '/r/logs/pulse-up-20261203T100000Z.log',
  lines: ['INFO loading weights'],
  logSource: null,
  problem: null,
};

describe('failureJson', () => {
  it('gives the failed step, the type, the message without the step, the compensation, the way back and the node facts', () => {
    const j = failureJson(failed, facts);
    assert.deepEqual(j, {
      step: 'readiness', errorType: 'Timeout', message: 'not ready after 3 s',
      compensated: { nodeMarkedFailed: true, endpointDisabled: true },
      // the way back restores the exact bytes the up replaced (issue 30 item 5), not an up of the profile it remembers
      backupPath: '/r/.env.pulse-bak-20261203T100000Z', rollbackCommand: 'pulse model rollback --node spark2 --to /r/.env.pulse-bak-20261203T100000Z',
      node: {
        answered: true, problem: null, container: { name: 'vllm-qwen38', state: 'running', running: true, exitMeaning: null },
        memAvailableGiB: 40.5, memTotalGiB: 119.7, startLog: '/r/logs/pulse-up-20261203T100000Z.log', logLines: ['INFO loading weights'],
        knownFailure: null,
      },
    });
    // The same facts as the text block prints.
    const text = failureBlockLines(facts).join('\n');
    assert.ok(text.includes('still running') && text.includes(j.node?.startLog ?? '?') && text.includes('| INFO loading weights'), text);
  });

  it('no compensation, no node read, no way back once an auto-rollback served again', () => {
    const r: DeployResult = { ...failed, compensated: false, state: 'unchanged', error: 'not a step', steps: [], rollback: { ok: true, profile: 'datagen', backup: null, workflowId: 'w', servingAfterS: 1, error: null } };
    const j = failureJson(r, null);
    assert.equal(j.step, null);
    assert.equal(j.message, 'not a step');
    assert.equal(j.compensated, null);
    assert.equal(j.rollbackCommand, null);
    assert.equal(j.node, null);
  });

  it('a node that did not answer says why', () => {
    const j = failureJson(failed, { node: 'spark2', status: null, startLog: null, lines: [], logSource: null, problem: 'ssh: connect timed out' });
    assert.equal(j.node?.answered, false);
    assert.equal(j.node?.problem, 'ssh: connect timed out');
    assert.equal(j.node?.container, null);
  });
});
