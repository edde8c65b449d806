/**
 * The secrets of the node .env survive an up in every form bash's `source` sets (issue 10 item 1), through the real
 * CLI, a `pulse worker`, the dev server and simulated sshd nodes: `export API_KEY=...`, indented, quoted. The new
 * .env, sourced by bash, gives the same bytes; the server runs with the key (an unauthenticated GET gets 401). A
 * line pulse cannot carry stops the up at preflight, before anything stops, naming the line and the key only.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { runCli } from '../helpers/cli.js';
import { startStack, type Stack } from '../helpers/stack.js';

const API_KEY = 'sk-carry-SECRET-8c1f2e';
const HF_TOKEN = 'hf_carrySECRETtok992';
let stack: Stack;

before(async () => {
  stack = await startStack({ nodes: ['simA'], readyDelayMs: 200 });
});
after(async () => {
  await stack?.stop();
});

/** What bash's `source` of `file` sets for `key` (the recipe's start.sh does exactly this). */
function sourced(file: string, key: string): string {
  const r = spawnSync('env', ['-i', 'bash', '-c', `set -a; source "$0" >/dev/null 2>&1; printf %s "\${${key}-UNSET}"`, file], { encoding: 'utf8' });
  return r.stdout;
}

async function unauthenticatedStatus(): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${stack.sim.node('simA').vllmPort}/v1/models`);
  return res.status;
}

test('export API_KEY=... and an indented, single-quoted HF_TOKEN are carried: the server still wants the key', async () => {
  const env = stack.sim.node('simA').envPath;
  writeFileSync(env, `# operator's .env\nMAX_NUM_SEQS=2\nexport API_KEY=${API_KEY}\n\t  HF_TOKEN='${HF_TOKEN}'\n`, { mode: 0o600 });
  const up = await runCli(['model', 'up', 'best', '--node', 'simA', '--verbose'], stack.env);
  assert.equal(up.code, 0, up.stdout + up.stderr);
  assert.equal(sourced(env, 'API_KEY'), API_KEY, readFileSync(env, 'utf8').replaceAll(API_KEY, '<key>'));
  assert.equal(sourced(env, 'HF_TOKEN'), HF_TOKEN);
  assert.equal(await unauthenticatedStatus(), 401, 'the new server answers an unauthenticated GET /v1/models with 401');
  assert.match(up.stdout, /write \.env on simA .*: backup .*, 2 secret line\(s\) carried/, 'the write-env step counts both carried lines');
  assert.ok(!(up.stdout + up.stderr).includes(API_KEY) && !(up.stdout + up.stderr).includes(HF_TOKEN));
});

test('a secret line pulse cannot carry stops the up at preflight, before the stop, naming the line and key only', async () => {
  const node = stack.sim.node('simA');
  const text = `MAX_NUM_SEQS=2\nHF_TOKEN=${HF_TOKEN}\nAPI_KEY+=${API_KEY}\n`;
  writeFileSync(node.envPath, text, { mode: 0o600 });
  const calls = (): number => node.startShCalls().length + node.stopShCalls().length;
  const callsBefore = calls();
  const up = await runCli(['model', 'up', 'datagen', '--node', 'simA'], stack.env);
  const out = up.stdout + up.stderr;
  assert.notEqual(up.code, 0, out);
  assert.match(out, /\.env:3: API_KEY: API_KEY\+= appends/, 'the message names the file, line 3 and the key');
  assert.ok(!out.includes(API_KEY) && !out.includes(HF_TOKEN), 'no value in the output');
  assert.doesNotMatch(out, /3\/9 stop/, 'nothing was stopped');
  assert.equal(readFileSync(node.envPath, 'utf8'), text, 'the .env is untouched');
  assert.equal(calls(), callsBefore, 'neither stop.sh nor start.sh ran');
  assert.equal(await unauthenticatedStatus(), 401, 'the old server still runs, with its key');
});

test('verify fails when the old .env had an API_KEY and the new server answers without one (the key was lost)', async () => {
  const node = stack.sim.node('simA');
  writeFileSync(node.envPath, `API_KEY="${API_KEY}"\n`, { mode: 0o600 });
  // A recipe update that drops --api-key: start.sh still reads API_KEY, but the server no longer gets it.
  const start = `${node.recipeDir}/start.sh`;
  const original = readFileSync(start, 'utf8');
  const keyArg = '\\${API_KEY:+--api-key "\\$API_KEY"}';
  assert.ok(original.includes(keyArg), 'the recipe passes the key as --api-key');
  writeFileSync(start, original.replace(keyArg, ''));
  try {
    const up = await runCli(['model', 'up', 'best', '--node', 'simA', '--restart'], stack.env);
    const out = up.stdout + up.stderr;
    assert.notEqual(up.code, 0, out);
    assert.match(out, /unauthenticated GET \/v1\/models with 200 although the old \.env had an API_KEY: the key was lost/);
    assert.ok(!out.includes(API_KEY));
  } finally {
    writeFileSync(start, original);
  }
});
