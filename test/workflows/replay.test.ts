/**
 * Replay: the saved histories of real runs (test/histories/*.json: success, same identity, down, failure with
 * compensation, crash-resume, rollback, an up's auto-rollback and its rollbackWorkflow child) replay against the
 * CURRENT workflow bundle, each under the workflow ID its run had, without a determinism error. A change to workflow
 * code that is not gated by patched() fails here; the second test proves this check has teeth by replaying
 * against a mutant upWorkflow whose step order differs.
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import { Worker, bundleWorkflowCode } from '@temporalio/worker';
import { WORKFLOW_BUNDLE_PATH } from '../../worker/main.js';
import { secretNeedles } from '../engine/secrets.js';
import { quietRuntime } from './harness.js';
import { REPO_ROOT } from '../helpers/paths.js';
import { rollbackChildId, workflowIdFor } from '../../workflows/definitions.js';

const DIR = path.join(REPO_ROOT, 'test', 'histories');

type History = ReturnType<typeof historyFromJSON>;

/**
 * The workflow ID the run had (the replay must see the same: an up's auto-rollback names its child after it): a
 * deploy's is the node lock of its input's node, a child's is named after its parent's.
 */
function workflowIdOf(history: History): string {
  const start = history.events?.[0]?.workflowExecutionStartedEventAttributes;
  const parent = start?.parentWorkflowExecution?.workflowId;
  if (parent) return rollbackChildId(parent);
  const data = start?.input?.payloads?.[0]?.data;
  const node = data ? (JSON.parse(Buffer.from(data).toString('utf8')) as { node?: unknown }).node : undefined;
  assert.equal(typeof node, 'string', 'the first input of a saved deploy names its node');
  return workflowIdFor(node as string);
}

/** The saved histories, each with its file's name (how results are reported) and its run's workflow ID. */
function histories(): { name: string; workflowId: string; history: History }[] {
  return readdirSync(DIR)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => {
      const history = historyFromJSON(JSON.parse(readFileSync(path.join(DIR, f), 'utf8')));
      return { name: f.replace(/\.json$/, ''), workflowId: workflowIdOf(history), history };
    });
}

/** Replays every saved history; the errors by file name (the replay goes one history at a time, in order). */
async function replayErrors(options: Parameters<typeof Worker.runReplayHistories>[0]): Promise<Map<string, string>> {
  const all = histories();
  const errors = new Map<string, string>();
  let i = 0;
  for await (const r of Worker.runReplayHistories(options, all)) {
    if (r.error) errors.set(all[i]?.name ?? r.workflowId, String(r.error));
    i += 1;
  }
  assert.equal(i, all.length, 'a result for every history');
  return errors;
}

describe('replay of saved histories', () => {
  it('every saved history replays against the current bundle', async () => {
    quietRuntime();
    const names = histories().map((h) => h.name);
    assert.ok(names.length >= 7, `histories: ${names.join(', ')}`);
    for (const kind of ['up-full-success', 'up-same-identity', 'down-success', 'up-never-ready-compensated', 'up-full-success-ref', 'down-success-ref',
      'rollback-success', 'up-never-ready-auto-rollback', 'up-never-ready-auto-rollback-failed-start', 'rollback-auto-child', 'up-full-success-start', 'up-same-identity-start', 'up-never-ready-compensated-start',
      'up-full-success-small', 'up-same-identity-small', 'up-never-ready-compensated-small', 'up-cancelled-compensated-small']) assert.ok(names.includes(kind), kind);
    assert.ok(names.some((n) => n.startsWith('up-crash-resume-')));
    const errors = await replayErrors({ workflowBundle: { codePath: WORKFLOW_BUNDLE_PATH } });
    assert.deepEqual([...errors.entries()], []);
  });

  it('no saved history holds the API_KEY or HF_TOKEN value planted on the nodes', () => {
    const files = readdirSync(DIR).filter((f) => f.endsWith('.json'));
    const leaking = files.filter((f) => secretNeedles().some((n) => readFileSync(path.join(DIR, f), 'utf8').includes(n)));
    assert.ok(files.length >= 7);
    assert.deepEqual(leaking, []);
  });

  it('a reordered upWorkflow (not behind patched()) fails the replay', { timeout: 120_000 }, async () => {
    const here = path.dirname(new URL(import.meta.url).pathname);
    const { code } = await bundleWorkflowCode({ workflowsPath: path.join(here, 'mutant-workflows.js'), logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} } });
    const errors = await replayErrors({ workflowBundle: { code } });
    assert.ok(errors.has('up-full-success'), 'the mutant must not replay the full up');
    assert.match(errors.get('up-full-success') ?? '', /[Nn]ondetermin|DeterminismViolation|TMPRL1100/);
  });
});
