/**
 * The worker is the authority, against the real dev server, a real `pulse worker` process and simulated sshd nodes:
 * (a) a hand-made input started with the real `temporal workflow start --type upWorkflow` (protected:false for a
 *     protected node, env.path elsewhere, recipe.start = an attacker's script, an attacker's gateway URL) is refused
 *     and nothing runs or is written on the node;
 * (b) an attacker's own workflow, on its own worker and task queue, that schedules pulse's activities on
 *     pulse-deploy and pulse-gateway with crafted inputs (or with an UpInputRef, which reads the attacker's own
 *     workflow input) is refused the same way;
 * (c) the normal case, nodes.json edited after the plan was made, reads as one clear line through the CLI.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { NativeConnection, Worker, bundleWorkflowCode } from '@temporalio/worker';
import { GATEWAY_TASK_QUEUE, TASK_QUEUE, UP_WORKFLOW, workflowIdFor } from '../../workflows/definitions.js';
import type { UpPlan } from '../../runtime/model/index.js';
import { runCli } from '../helpers/cli.js';
import { TEMPORAL_BIN } from '../helpers/dev-server.js';
import { startStack, type Stack } from '../helpers/stack.js';
import type { AttackCall, AttackOutcome } from './attacker-workflows.js';

const execFileP = promisify(execFile);
const ATTACKER_URL = 'http://198.51.100.66:9999/v1';
let stack: Stack;
let evil = '';
let canary = '';
let pwned = '';

before(async () => {
  stack = await startStack({ nodes: ['guarded', 'open'], protected: ['guarded'], readyDelayMs: 200 });
  const open = stack.sim.node('open');
  const dir = path.dirname(open.recipeDir);
  canary = path.join(dir, 'attacker-ran');
  pwned = path.join(dir, 'pwned.env');
  evil = path.join(dir, 'evil.sh');
  writeFileSync(evil, `#!/bin/bash\ntouch ${canary}\n`, { mode: 0o755 });
  writeFileSync(open.envPath, 'MAX_NUM_SEQS=2\n', { mode: 0o600 });
});
after(async () => {
  await stack?.stop();
});

function nodeActivity(node: string): string {
  const n = stack.sim.node(node);
  return JSON.stringify({ docker: n.dockerCalls().length, start: n.startShCalls().length, stop: n.stopShCalls().length, req: n.requests().length });
}

function untouched(): { check(): Promise<void> } {
  const nodes = ['guarded', 'open'].map((n) => [n, nodeActivity(n)] as const);
  const env = readFileSync(stack.sim.node('open').envPath, 'utf8');
  return {
    async check() {
      for (const [n, before] of nodes) assert.equal(nodeActivity(n), before, `nothing ran on ${n}`);
      assert.equal(readFileSync(stack.sim.node('open').envPath, 'utf8'), env, 'the .env is unchanged');
      for (const f of [canary, pwned]) assert.equal(existsSync(f), false, `${f} must not exist`);
      for (const [f, text] of await stack.stateFiles()) assert.equal(text.includes(ATTACKER_URL), false, `${f} holds the attacker's URL`);
    },
  };
}

/** The tampered plans of (a): each names the field the worker must name in its refusal. */
function tampered(): { name: string; field: RegExp; plan: UpPlan }[] {
  const base = (node = 'open'): UpPlan => stack.planUp(node, 'best', { restart: true });
  const guarded = base('guarded');
  const path_ = base();
  const start = base();
  const gw = base();
  return [
    { name: 'protected:false for a protected node', field: /protected \(plan false, worker true\)/, plan: { ...guarded, protected: false } },
    { name: 'env.path elsewhere', field: /env\.path \(plan "[^"]*pwned\.env"/, plan: { ...path_, env: { ...path_.env, path: pwned } } },
    { name: "recipe.start = the attacker's script", field: /recipe\.start \(plan "[^"]*evil\.sh"/, plan: { ...start, recipe: { ...start.recipe, start: evil } } },
    { name: "the attacker's gateway URL", field: /fleet\[\d\]\.gatewayUrl \(plan "http:\/\/198\.51\.100\.66/, plan: { ...gw, fleet: gw.fleet.map((f) => ({ ...f, gatewayUrl: ATTACKER_URL })) } },
  ];
}

test('(a) `temporal workflow start --type upWorkflow` with a tampered plan is refused; nothing runs or is written on the node', async () => {
  for (const t of tampered()) {
    const guard = untouched();
    const workflowId = workflowIdFor(t.plan.node);
    await execFileP(TEMPORAL_BIN, ['workflow', 'start', '--address', stack.server.address, '--namespace', 'default', '--task-queue', TASK_QUEUE,
      '--type', UP_WORKFLOW, '--workflow-id', workflowId, '--input', JSON.stringify(t.plan)]);
    const out = await stack.outcome(stack.client.workflow.getHandle(workflowId));
    assert.equal(out.status, 'refused', `${t.name}: ${out.status} ${out.error ?? ''}`);
    assert.match(out.result?.error ?? '', /^check: plan refused by the worker: /, t.name);
    assert.match(out.result?.error ?? '', t.field, t.name);
    assert.equal(out.result?.state, 'unchanged', t.name);
    await guard.check();
  }
});

/** Runs the attacker's workflow on its own worker and queue; returns each call's outcome. */
async function attack(calls: AttackCall[]): Promise<AttackOutcome[]> {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const quiet = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };
  const { code } = await bundleWorkflowCode({ workflowsPath: path.join(here, 'attacker-workflows.js'), logger: quiet });
  const connection = await NativeConnection.connect({ address: stack.server.address });
  try {
    const worker = await Worker.create({ connection, taskQueue: 'attacker-queue', workflowBundle: { code } });
    return await worker.runUntil(stack.client.workflow.execute('attackerWorkflow', { taskQueue: 'attacker-queue', workflowId: `attack-${Date.now()}`, args: [calls] }));
  } finally {
    await connection.close();
  }
}

test("(b) an attacker's own workflow calling pulse's activities on pulse's queues with crafted inputs is refused; nothing on the node", async () => {
  const plan = stack.planUp('open', 'best', { restart: true });
  const guarded = stack.planUp('guarded', 'best', { yes: true });
  const state = { node: 'open', state: 'up', action: 'up', profile: 'best', identity: null, backupPath: null, logPath: null, kvCacheLine: null, maxModelLen: null, servedModelName: null, overlayManifest: null, error: null, previousProfile: null };
  const calls: AttackCall[] = [
    { name: 'start with recipe.start = evil.sh', activity: 'startServer', taskQueue: TASK_QUEUE, input: { plan: { ...plan, recipe: { ...plan.recipe, start: evil } }, deployId: 'x/y' } },
    { name: 'write-env to another path', activity: 'writeEnv', taskQueue: TASK_QUEUE, input: { ...plan, env: { ...plan.env, path: pwned, text: 'ATTACKER=1\n' } } },
    { name: 'mkdir of an attacker dir', activity: 'makeDirs', taskQueue: TASK_QUEUE, input: { ...plan, mkdirs: [pwned] } },
    { name: 'stop with stop = evil.sh', activity: 'stopServer', taskQueue: TASK_QUEUE, input: { node: 'open', target: plan.target, recipe: { ...plan.recipe, stop: evil }, confirmed: true } },
    { name: 'stop on the protected node without --yes', activity: 'stopServer', taskQueue: TASK_QUEUE, input: { node: 'guarded', target: guarded.target, recipe: guarded.recipe } },
    { name: 'preflight against another host', activity: 'runPreflight', taskQueue: TASK_QUEUE, input: { ...plan, target: { name: 'open', host: 'ssh', ssh: '198.51.100.66' } } },
    { name: 'verify reads another file', activity: 'verifyServer', taskQueue: TASK_QUEUE, input: { plan, logPath: '/etc/shadow' } },
    // A step that names its workflow input reads the attacker's own workflow input, which is no plan of the worker's.
    { name: 'start naming its workflow input', activity: 'startServer', taskQueue: TASK_QUEUE, input: { plan: { node: 'open', from: 'workflow input' }, deployId: 'x/y' } },
    { name: 'check naming its workflow input', activity: 'checkPlan', taskQueue: TASK_QUEUE, input: { node: 'open', from: 'workflow input' } },
    { name: 'state for a node not in nodes.json', activity: 'publishState', taskQueue: GATEWAY_TASK_QUEUE, input: { ...state, node: 'intruder', fleet: [] } },
  ];
  const guard = untouched();
  const results = await attack(calls);
  for (const r of results) {
    assert.equal(r.ok, false, `${r.name} was run`);
    assert.equal(r.type, 'Refused', `${r.name}: ${r.type} ${r.message}`);
    assert.match(r.message, /^plan refused by the worker: /, r.name);
  }
  await guard.check();
  // A state write for a real node is allowed (it is what a deploy does), but the gateway file keeps the worker's
  // own fleet: the attacker's URL never reaches it.
  const [pub] = await attack([{ name: 'publish with an attacker fleet', activity: 'publishState', taskQueue: GATEWAY_TASK_QUEUE, input: { ...state, fleet: [{ node: 'open', gatewayUrl: ATTACKER_URL, reachable: true }] } }]);
  assert.equal(pub?.ok, true, pub?.message);
  const gw = readFileSync(path.join(stack.stateDir, 'gateway-backends.json'), 'utf8');
  assert.equal(gw.includes(ATTACKER_URL), false);
  assert.ok(gw.includes(plan.fleet.find((f) => f.node === 'open')?.gatewayUrl ?? '?'), 'the gateway file has the worker\'s URL for open');
});

test('(c) nodes.json edited after the plan was made: refused before anything runs, in one clear line through the CLI', async () => {
  const plan = stack.planUp('open', 'best', { restart: true });
  const original = readFileSync(stack.nodesFile, 'utf8');
  const guard = untouched();
  try {
    const edited = JSON.parse(original) as { nodes: Record<string, { gatewayUrl: string }> };
    const open = edited.nodes['open'];
    assert.ok(open);
    open.gatewayUrl = 'http://127.0.0.1:18099/v1';
    writeFileSync(stack.nodesFile, JSON.stringify(edited, null, 2));
    const later = new Date(Date.parse(plan.renderedAt) + 60_000);
    utimesSync(stack.nodesFile, later, later); // the edit is after the plan, whatever this second's rounding
    assert.equal((await stack.outcome(await stack.start(plan))).status, 'refused');
    await guard.check(); // before watch: its closing line asks the node read-only (status.sh runs docker ps)
    const r = await runCli(['model', 'watch', '--node', 'open'], stack.env);
    assert.equal(r.code, 4, r.stdout + r.stderr);
    // The cause is said on the step's ✗ line and once more as `cause:` right above the verdict, so at 80x24 the
    // verdict and its cause are the last lines on screen; the result line points at it.
    const result = r.stdout.split('\n').find((l) => l.startsWith('up best on open: FAILED'));
    assert.match(result ?? r.stdout, /^up best on open: FAILED at check \(cause above\), node unchanged/);
    const cause = /plan refused by the worker: nodes\.json changed since this plan was made: fleet\[\d\]\.gatewayUrl \(plan "http:\/\/[^"]+", worker "http:\/\/127\.0\.0\.1:18099\/v1"\)/g;
    assert.equal(r.stdout.match(cause)?.length, 2, r.stdout);
    assert.match(r.stdout, /^ *✗ .*check.*plan refused by the worker/m);
    assert.match(r.stdout, /^cause: check: plan refused by the worker/m);
    assert.match(r.stdout, /pulse changed nothing on open: no server runs there/);
  } finally {
    writeFileSync(stack.nodesFile, original);
  }
});
