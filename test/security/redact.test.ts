/**
 * Recipe output cannot carry the node's secrets off the node (issue 10 item 6): a stop.sh with `set -x` that
 * sources the .env and echoes both values, then fails, runs in a real up and down (CLI, `pulse worker`, dev server,
 * simulated sshd node). Its stderr reaches the operator as the failure's tail, yet neither value appears in any CLI
 * output, node state file, exported Temporal history or worker log: prelude.sh redacts them on the node.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { runCli, type CliResult } from '../helpers/cli.js';
import { startStack, type Stack } from '../helpers/stack.js';

const API_KEY = 'sk-redact-SECRET-5d9e0b';
const HF_TOKEN = 'hf_redactSECRETtok7310';
let stack: Stack;
const outputs: CliResult[] = [];

const LEAKY_STOP = `#!/usr/bin/env bash
set -x
source "$(dirname "$0")/.env"
echo "stop.sh: using key $API_KEY and token $HF_TOKEN" >&2
echo "stop.sh: on stdout too: $API_KEY"
exit 1
`;

function assertNoSecret(where: string, text: string): void {
  for (const s of [API_KEY, HF_TOKEN]) {
    assert.equal(text.includes(s), false, `${where} holds a secret value`);
    assert.equal(text.includes(s.slice(4, 20)), false, `${where} holds part of a secret`);
  }
}

before(async () => {
  stack = await startStack({ nodes: ['simA'], readyDelayMs: 200 });
  const node = stack.sim.node('simA');
  writeFileSync(node.envPath, `MAX_NUM_SEQS=2\nexport API_KEY=${API_KEY}\nHF_TOKEN="${HF_TOKEN}"\n`, { mode: 0o600 });
  const up = await runCli(['model', 'up', 'best', '--node', 'simA'], stack.env);
  assert.equal(up.code, 0, up.stdout + up.stderr);
  writeFileSync(`${node.recipeDir}/stop.sh`, LEAKY_STOP, { mode: 0o755 });
});
after(async () => {
  await stack?.stop();
});

test('a failing stop.sh with set -x: up and down fail, showing its stderr tail redacted', async () => {
  const up = await runCli(['model', 'up', 'datagen', '--node', 'simA', '--verbose'], stack.env);
  outputs.push(up);
  assert.notEqual(up.code, 0);
  assert.match(up.stdout + up.stderr, /stop\.sh exited 1/);
  assert.match(up.stdout + up.stderr, /<redacted:(API_KEY|HF_TOKEN)>/, 'the tail reached the operator, with the values replaced');
  const down = await runCli(['model', 'down', '--node', 'simA', '--verbose'], stack.env);
  outputs.push(down);
  assert.notEqual(down.code, 0);
  for (const r of outputs) assertNoSecret('CLI output', r.stdout + r.stderr);
});

test('no secret value in the node state files, the worker log or any exported history', async () => {
  const files = await stack.stateFiles();
  assert.ok([...files.keys()].some((f) => f.startsWith('nodes/')));
  for (const [f, text] of files) assertNoSecret(`state file ${f}`, text);
  for (const w of stack.workers) assertNoSecret('worker log', w.log());
  const runs = await stack.allRuns();
  assert.ok(runs.length >= 3);
  let sawTail = false;
  for (const { workflowId, runId } of runs) {
    const text = await stack.historyText(workflowId, runId);
    sawTail ||= text.includes('<redacted:API_KEY>');
    assertNoSecret(`history of ${workflowId}/${runId}`, text);
  }
  assert.ok(sawTail, 'the redacted tail is in history (the scan looked at the right place)');
});

test('the scan can fail: the node .env holds the values', () => {
  assert.throws(() => assertNoSecret('node .env', readFileSync(stack.sim.node('simA').envPath, 'utf8')));
});
