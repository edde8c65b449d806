/**
 * Replay: the saved histories of real runs (test/histories/*.json: success, same identity, down, failure with
 * compensation, crash-resume) replay against the CURRENT workflow bundle without a determinism error. A change to
 * workflow code that is not gated by patched() fails here; the second test proves this check has teeth by replaying
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

const DIR = path.join(REPO_ROOT, 'test', 'histories');

function histories(): { workflowId: string; history: ReturnType<typeof historyFromJSON> }[] {
  return readdirSync(DIR)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => ({ workflowId: f.replace(/\.json$/, ''), history: historyFromJSON(JSON.parse(readFileSync(path.join(DIR, f), 'utf8'))) }));
}

async function replayErrors(options: Parameters<typeof Worker.runReplayHistories>[0]): Promise<Map<string, string>> {
  const errors = new Map<string, string>();
  for await (const r of Worker.runReplayHistories(options, histories())) if (r.error) errors.set(r.workflowId, String(r.error));
  return errors;
}

describe('replay of saved histories', () => {
  it('every saved history replays against the current bundle', async () => {
    quietRuntime();
    const names = histories().map((h) => h.workflowId);
    assert.ok(names.length >= 7, `histories: ${names.join(', ')}`);
    for (const kind of ['up-full-success', 'up-same-identity', 'down-success', 'up-never-ready-compensated', 'up-full-success-ref', 'down-success-ref']) assert.ok(names.includes(kind), kind);
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
