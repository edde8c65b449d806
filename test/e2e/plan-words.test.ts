/**
 * Found by hand at 80x24 on a 3-node simulator (review of the operator's worst-moment screens):
 * - `history --json` gives a rollout row `outcome: null` while its text row and the live screen say REFUSED: the one
 *   word per outcome is missing where a script reads it (`--json` "adds `outcome`", README).
 * - with the gateway node's server stopped by hand (docker stop), a rollout's dry-run says "not counted as serving:
 *   simA (… down)", but `up --node simA --dry-run` (even with --preflight, which asks the node) says simA "is the last
 *   endpoint that serves the model … while this up restarts its server the model has none": the two plans disagreed.
 *   RUNTIME.md lets neither dry-run ask the node (step 1's reads only): their line says it is the file's word.
 * simA is the gateway node (the one endpoint the gateway reaches); the others listen on loopback.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { runCli } from '../helpers/cli.js';
import { startSimCli, stopSimCli, type SimCli } from '../helpers/sim-cli.js';
import type { HistoryRow } from '../../cli/commands/history.js';

let rig: SimCli | null = null;
const env = (): NodeJS.ProcessEnv => rig!.env;

before(async () => {
  rig = await startSimCli('pulse-review-screens-', { nodes: ['simA', 'simB'], readyDelayMs: 300 });
});
after(() => stopSimCli(rig?.sim ?? null, rig?.dir ?? ''));

test('a REFUSED rollout has outcome "refused" in history --json, as its text row says REFUSED', async () => {
  const a = await runCli(['model', 'up', 'best', '--node', 'simA', '--yes'], env());
  assert.equal(a.code, 0, a.stdout + a.stderr);
  const refused = await runCli(['model', 'up', 'datagen', '--node', 'simA,simB', '--yes'], env());
  assert.equal(refused.code, 4, refused.stdout + refused.stderr);
  assert.match(refused.stdout, /rollout up datagen: REFUSED/);
  const h = await runCli(['model', 'history', '--json'], env());
  assert.equal(h.code, 0, h.stdout + h.stderr);
  const row = (JSON.parse(h.stdout) as HistoryRow[]).find((r) => r.action === 'rollout');
  assert.ok(row, h.stdout);
  assert.equal(row.outcome, 'refused', JSON.stringify(row));
});

test('a stopped gateway node: the rollout plan does not count it; a single up dry-run, which asks no node whether it serves, says its line is the gateway file\'s word', async () => {
  const a = await runCli(['model', 'up', 'best', '--node', 'simA', '--yes'], env()); // serving, whatever ran before
  assert.equal(a.code, 0, a.stdout + a.stderr);
  rig!.sim.node('simA').docker('stop', 'vllm-qwen38');
  const plan = await runCli(['model', 'up', 'datagen', '--node', 'simA,simB', '--yes', '--dry-run'], env());
  assert.equal(plan.code, 0, plan.stdout + plan.stderr);
  assert.match(plan.stdout, /not counted as serving: simA/, plan.stdout);
  // RUNTIME.md: --dry-run runs no command on a node, --dry-run --preflight only step 1's reads; neither asks the node
  // whether it serves, so the warning must say whose word it is, never the node's.
  for (const extra of [[], ['--preflight']]) {
    const one = await runCli(['model', 'up', 'datagen', '--node', 'simA', '--yes', '--dry-run', ...extra], env());
    assert.equal(one.code, 0, one.stdout + one.stderr);
    assert.match(one.stdout, /simA is the last endpoint that serves the model in the gateway backend file/, `${extra.join(' ')}\n${one.stdout.slice(-1500)}`);
  }
});
