/**
 * An up's automatic rollback (issue 14): after the compensation (node failed, endpoint disabled) and the release of
 * the node lock, a rollbackWorkflow child brings back the .env that was live before the up: the backup the up's
 * write step made, or, when the up never wrote, the recipe .env itself (still the old one). The child is its own
 * workflow (its own row in `pulse model history`, linked to this up in the UI and by `undid`), and it never rolls
 * back in turn. Its publish step marks the node up and enables its endpoint again once verify passed.
 */
import { executeChild, patched, workflowInfo } from '@temporalio/workflow';
import { utc } from '../runtime/format.js';
import { ROLLBACK_STEPS } from '../runtime/steps/catalog.js';
import { FRAME_STEPS } from '../runtime/steps/catalog.js';
import { AUTO_ROLLBACK_PATCH, FAILED_START_PATCH, ROLLBACK_RECORD_PATCH, ROLLBACK_WORKFLOW, rollbackChildId, SA_ACTION, SA_NODE } from './definitions.js';
import { stateInput } from './up-steps.js';
import { describeError } from './result.js';
import type { rollbackWorkflow } from './rollback.js';
import { hasPulseAttributes } from './saga.js';
import type { UpRun } from './up-steps.js';
import type { RollbackRequest } from '../runtime/model/index.js';

/** Runs the child and records how it went in run.result (rollback, error, state); never throws. */
export async function autoRollback(run: UpRun): Promise<void> {
  if (!patched(AUTO_ROLLBACK_PATCH)) return;
  const { plan, result } = run;
  const info = workflowInfo();
  // No write (it failed at stop or memory, or found the same identity): the live .env is still the old one.
  const backup = run.written === null || !run.written.written ? plan.env.path : run.written.backupPath;
  const why = result.error ?? 'deploy failed';
  if (backup === null) {
    result.rollback = { ok: false, profile: null, backup: null, workflowId: null, servingAfterS: null, error: 'no previous .env to go back to (the up wrote the first one)' };
    result.error = `${why}; rollback failed too: ${result.rollback.error}`;
    return;
  }
  // renderedAt: workflow time to the second, the stamp of the files the rollback writes.
  const request: RollbackRequest = {
    action: 'rollback', version: 1, node: plan.node, backup, confirmed: plan.confirmed, force: false,
    renderedAt: utc(Date.now()), undid: `${info.workflowId}/${info.firstExecutionRunId}`, timeoutS: null,
  };
  const workflowId = rollbackChildId(info.workflowId);
  if (run.started !== null && patched(FAILED_START_PATCH)) await readFailedStart(run, run.started.logPath);
  try {
    const r = await run.t.run(ROLLBACK_STEPS.auto, () => executeChild<typeof rollbackWorkflow>(ROLLBACK_WORKFLOW, {
      workflowId,
      args: [request],
      staticSummary: `auto-rollback on ${plan.node} (undoes up ${plan.profile})`,
      ...(hasPulseAttributes() ? { typedSearchAttributes: [{ key: SA_NODE, value: plan.node }, { key: SA_ACTION, value: 'rollback' }] } : {}),
    }));
    const after = run.stopAt === null ? null : Math.round((Date.now() - run.stopAt) / 100) / 10;
    result.rollback = { ok: true, profile: r.profile, backup, workflowId, servingAfterS: after, error: null };
    result.state = 'up';
    result.error = `${why}; rolled back to ${r.profile ?? '?'}, serving again after ${after ?? '?'} s`;
    result.warnings.push(...r.warnings);
  } catch (e) {
    const msg = describeError(e).message;
    result.rollback = { ok: false, profile: null, backup, workflowId, servingAfterS: null, error: msg };
    result.error = `${why}; rollback failed too: ${msg}`;
    // The child's compensation recorded the node as its own failed up of the restored profile: the record is this up's.
    if (patched(ROLLBACK_RECORD_PATCH)) {
      const error = result.error;
      await run.t.run(FRAME_STEPS.compensate, () => run.acts.markFailed(stateInput(run, 'failed', error))).catch((err: unknown) => {
        result.warnings.push(`the node's record was not written again (${describeError(err).message}): it names the rollback`);
      });
    }
  }
}

/**
 * The failed start as the node still has it: the rollback's stop removes its container (and with it the only copy of
 * its log's last lines), so they go into the up's result first. A failure to read is noted, never thrown.
 */
async function readFailedStart(run: UpRun, logPath: string): Promise<void> {
  try {
    run.result.failedStart = await run.t.run(FRAME_STEPS.failedStart, () => run.acts.failedStart({ plan: run.step, logPath }));
  } catch (e) {
    run.result.failedStart = { logPath, source: null, name: null, lines: [], known: null, problem: describeError(e).message };
  }
}
