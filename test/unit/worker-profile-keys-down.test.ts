/**
 * The recipe-key rule (a runnable profile must set every recipe key) is checked when profiles load, and the worker
 * loads its whole profiles folder for every activity's plan check (activities/authority.ts: source.load(), then
 * ownDownPlan), down's included. So one
 * operator profile that leaves a key unset, kept in the worker's folder from before the rule, refuses every `down` of
 * the fleet, though a down names no profile at all: `pulse model down --node spark2` against such a worker ends
 * "FAILED at check ... mine.env: MAX_MODEL_LEN is not set", exit 3, the server still running. An unrelated profile
 * must not keep an operator from stopping a node: the worker reads its profiles only when an activity needs them.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileSource } from '../../worker/deps.js';
import { loadNodesConfig } from '../../runtime/config/nodes.js';
import { buildDownPlan } from '../../runtime/plan/plan.js';
import { ownDownPlan } from '../../runtime/plan/plan-check.js';
import { REPO_ROOT } from '../helpers/paths.js';

const fleet = path.join(REPO_ROOT, 'test/fixtures/nodes/fleet.json');
const shipped = path.join(REPO_ROOT, 'runtime/qwen38/profiles');

test('the worker checks a down plan although an unrelated profile of its folder leaves a recipe key unset', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pulse-worker-keys-'));
  try {
    for (const f of readdirSync(shipped)) copyFileSync(path.join(shipped, f), path.join(dir, f));
    const old = readFileSync(path.join(shipped, 'datagen.env'), 'utf8').split('\n').filter((l) => !l.startsWith('MAX_MODEL_LEN=')).join('\n');
    writeFileSync(path.join(dir, 'mine.env'), old);
    const plan = buildDownPlan(loadNodesConfig(fleet), { node: 'spark2', yes: false }, new Date());
    // The same plan passes the check with the shipped folder: what differs is only the unrelated mine.env.
    assert.doesNotThrow(() => ownDownPlan(fileSource(fleet, shipped).load(), JSON.parse(JSON.stringify(plan))));
    assert.doesNotThrow(() => ownDownPlan(fileSource(fleet, dir).load(), JSON.parse(JSON.stringify(plan))), 'a down names no profile: an incomplete mine.env must not refuse it');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
