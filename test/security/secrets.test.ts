/**
 * Secrets never leave the node: with API_KEY and HF_TOKEN in the node .env, a full up (verbose), a same-identity
 * up, status --yes, smoke --yes, a failed-and-compensated up and a down run through the real CLI, a separate
 * `pulse worker` and the real dev server. Then every CLI output, the worker log, every state file and the full
 * history of every workflow (inputs, results, heartbeats, failures, payloads decoded) are scanned for the values.
 * The test first proves the secrets were in play: the server ran with --api-key, curl sent the key, and the new
 * .env carries both lines.
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { runCli, type CliResult } from '../helpers/cli.js';
import { startStack, type Stack } from '../helpers/stack.js';

const API_KEY = 'sk-pulse-SECRET-apikey-7f3a9c';
const HF_TOKEN = 'hf_pulseSECRETtoken4411';
const SECRETS = [API_KEY, HF_TOKEN];
let stack: Stack;
const outputs: { what: string; r: CliResult }[] = [];

function seedSecrets(node: string): void {
  const file = stack.sim.node(node).envPath;
  writeFileSync(file, `# an operator's .env\nMAX_NUM_SEQS=2\nAPI_KEY=${API_KEY}\nHF_TOKEN=${HF_TOKEN}\n`, { mode: 0o600 });
}

async function cli(what: string, args: string[]): Promise<CliResult> {
  const r = await runCli(args, stack.env);
  outputs.push({ what, r });
  return r;
}

function assertNoSecret(where: string, text: string): void {
  for (const s of SECRETS) assert.equal(text.includes(s), false, `${where} contains a secret value`);
  // Also no fragment long enough to identify them (e.g. a value cut by a tail buffer).
  for (const s of SECRETS) assert.equal(text.includes(s.slice(3, 19)), false, `${where} contains part of a secret`);
}

before(async () => {
  stack = await startStack({ nodes: ['simA', 'simB'], readyDelayMs: 300 });
  seedSecrets('simA');
  seedSecrets('simB');
});
after(async () => {
  await stack?.stop();
});

test('the secrets are in play: up runs the server with the key, curl sends it, the new .env carries both lines', async () => {
  const up = await cli('up --verbose', ['model', 'up', 'best', '--node', 'simA', '--verbose']);
  assert.equal(up.code, 0, up.stdout + up.stderr);
  const env = readFileSync(stack.sim.node('simA').envPath, 'utf8');
  assert.ok(env.includes(`API_KEY="${API_KEY}"`) && env.includes(`HF_TOKEN="${HF_TOKEN}"`), 'both secret lines carried to the new .env (as KEY="value")');
  const reqs = stack.sim.node('simA').requests();
  assert.ok(reqs.some((q) => q.authorized && q.status === 200), 'curl sent the key and the server answered 200');
  const again = await cli('up same identity', ['model', 'up', 'best', '--node', 'simA']);
  assert.equal(again.code, 0, again.stdout + again.stderr);
  const status = await cli('status --json --yes', ['model', 'status', '--json', '--yes']);
  assert.equal(status.code, 0, status.stdout + status.stderr);
  const smoke = await cli('smoke --yes', ['model', 'smoke', '--node', 'simA', '--yes']);
  assert.equal(smoke.code, 0, smoke.stdout + smoke.stderr);
  stack.sim.node('simB').setFailure('never-ready');
  const failed = await cli('up that fails and compensates', ['model', 'up', 'best', '--node', 'simB', '--timeout-s', '3', '--verbose']);
  assert.notEqual(failed.code, 0);
  assert.match(failed.stdout + failed.stderr, /FAILED/);
  const down = await cli('down', ['model', 'down', '--node', 'simA', '--verbose']);
  assert.equal(down.code, 0, down.stdout + down.stderr);
  const history = await cli('history', ['model', 'history', '--node', 'simA']);
  assert.equal(history.code, 0, history.stdout + history.stderr);
});

test('no secret value in any CLI output (stdout and stderr, --verbose included)', () => {
  assert.ok(outputs.length >= 6);
  for (const { what, r } of outputs) assertNoSecret(`pulse ${what} output`, r.stdout + r.stderr);
});

test('no secret value in the worker log', () => {
  for (const w of stack.workers) assertNoSecret(`worker ${w.pid} log`, w.log());
});

test('no secret value in any state file (node states, gateway file, locks)', async () => {
  const files = await stack.stateFiles();
  assert.ok([...files.keys()].some((f) => f.startsWith('nodes/')), 'node states were written');
  for (const [f, text] of files) assertNoSecret(`state file ${f}`, text);
});

test('no secret value in any workflow input, result or full history (payloads decoded)', async () => {
  const runs = await stack.allRuns();
  assert.ok(runs.length >= 4, `expected the deploys in history, got ${runs.length}`);
  for (const { workflowId, runId } of runs) {
    const text = await stack.historyText(workflowId, runId);
    assert.ok(text.includes('"profile"') || text.includes('downWorkflow') || text.includes('upWorkflow'));
    assertNoSecret(`history of ${workflowId}/${runId}`, text);
  }
});

test('the scan can fail: the same scan finds the values in the node .env', () => {
  assert.throws(() => assertNoSecret('node .env', readFileSync(stack.sim.node('simA').envPath, 'utf8')));
});

test('the key reaches curl on stdin, never on a command line (every curl process seen during a slow up)', async () => {
  stack.sim.node('simA').setControl({ failure: 'slow', slowMs: 1500 });
  const curls: string[] = [];
  let done = false;
  const scan = async (): Promise<void> => {
    while (!done) {
      for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
        let argv = '';
        try {
          argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
        } catch {
          continue;
        }
        if (/(^|\/)curl\0/.test(argv)) curls.push(argv.replaceAll('\0', ' '));
      }
      await new Promise((r) => setTimeout(r, 25));
    }
  };
  const scanning = scan();
  const up = await cli('up on a slow server', ['model', 'up', 'best', '--node', 'simA']);
  done = true;
  await scanning;
  stack.sim.node('simA').setControl({ failure: 'none' });
  assert.equal(up.code, 0, up.stdout + up.stderr);
  assert.ok(curls.length > 0, 'no curl process was seen: the scan proves nothing');
  for (const c of curls) assertNoSecret(`curl command line ${c}`, c);
});
