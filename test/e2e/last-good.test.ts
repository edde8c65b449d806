/**
 * Last known good through the product (issue 14 item 3): a verified up on a simulated node becomes it; a failed up
 * keeps it and points it at the backup that now holds its exact bytes; `status` shows it in --json and the table.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { parseEnvHeader } from '../../runtime/config/env-header.js';
import { utc } from '../../runtime/format.js';
import type { StatusReport } from '../../runtime/status/types.js';
import type { Sim } from '../sim/index.js';
import { runCli } from '../helpers/cli.js';
import { savedNodeState, startSimCli, stopSimCli } from '../helpers/sim-cli.js';

let sim: Sim | null = null;
let dir = '';
let env: NodeJS.ProcessEnv = {};

const nodeState = (node: string) => savedNodeState(dir, node);

before(async () => ({ sim, dir, env } = await startSimCli('pulse-last-good-', { nodes: ['simA'], readyDelayMs: 300 })));

after(() => stopSimCli(sim, dir));

test('a verified up is last known good; a failed up keeps it, in the backup it wrote; status shows it', async () => {
  const first = await runCli(['model', 'up', 'datagen', '--node', 'simA'], env);
  assert.equal(first.code, 0, first.stdout + first.stderr);
  const good = await nodeState('simA');
  assert.equal(good.lastKnownGood?.profile, 'datagen');
  assert.deepEqual(good.lastKnownGood?.identity, good.identity);
  assert.equal(good.lastKnownGood?.backupPath, null, 'its .env is the live one');
  assert.equal(good.lastKnownGood?.workflowId, 'pulse-model-simA');

  sim!.node('simA').setFailure('never-ready');
  const failed = await runCli(['model', 'up', 'best', '--node', 'simA', '--timeout-s', '3'], env);
  assert.notEqual(failed.code, 0);
  sim!.node('simA').setFailure('none');
  const after = await nodeState('simA');
  assert.equal(after.state, 'failed');
  assert.ok(after.backupPath, 'the failed up backed up the good .env');
  assert.deepEqual(after.lastKnownGood, { ...good.lastKnownGood, backupPath: after.backupPath });
  // The backup holds the good .env: its pulse header names the verified identity.
  const h = parseEnvHeader(await readFile(after.backupPath, 'utf8'));
  assert.deepEqual([h?.profile, h?.sha256], ['datagen', good.identity?.sha256]);

  const json = await runCli(['model', 'status', '--node', 'simA', '--json'], env);
  const report = JSON.parse(json.stdout) as StatusReport;
  assert.deepEqual(report.nodes[0]?.lastKnownGood, after.lastKnownGood, json.stdout);
  const text = await runCli(['model', 'status', '--node', 'simA'], env);
  // The table wraps long rows: compare with the white space folded.
  assert.ok(text.stdout.replace(/\s+/g, ' ').includes(`last good datagen (sha256 ${good.identity?.sha256.slice(0, 12)}) verified at ${utc(good.lastKnownGood?.at)}, kept in ${after.backupPath}`), text.stdout);
});
