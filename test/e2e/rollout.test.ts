/**
 * Rollouts through the product (issue 15): `pulse model up <profile> --node a,b,c` over simulated nodes (real sshd,
 * the embedded Temporal dev server, the CLI as a user runs it). simA is the gateway node, the only endpoint the
 * gateway reaches (the others listen on loopback, like spark2), so a rollout over simB..simD keeps simA serving and
 * one that takes simA down would leave none. One rig for the whole file.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { stopEmbeddedServer } from '../../cli/deploy-client/embedded-server.js';
import type { NodeState } from '../../runtime/model/index.js';
import { startSim, type Sim } from '../sim/index.js';
import { backgroundWorkerPid, killEmbeddedServerOnExit, removeDir, runCli, simCliEnv, startCli, tempDir, waitForOutput } from '../helpers/cli.js';
import { until } from '../helpers/until.js';

let sim: Sim | null = null;
let dir = '';
let env: NodeJS.ProcessEnv = {};
const stateDir = () => path.join(dir, 'state');
const LATER = ['simB', 'simC', 'simD'];

async function nodeState(node: string): Promise<NodeState> {
  return JSON.parse(await readFile(path.join(stateDir(), 'nodes', `${node}.json`), 'utf8')) as NodeState;
}
const starts = (node: string): number => sim!.node(node).startShCalls().length;
const counts = (): Record<string, number> => Object.fromEntries(['simA', ...LATER].map((n) => [n, starts(n)]));
/** When the node's smoke request (the gate) was answered, and when its container was first run after `since`. */
const smokeAt = (node: string): string[] => sim!.node(node).requests().filter((r) => r.path === '/v1/chat/completions' && r.status === 200).map((r) => r.at);
const runAt = (node: string): string[] => sim!.node(node).dockerCalls().filter((c) => c.argv[0] === 'run').map((c) => c.at);

before(async () => {
  dir = await tempDir('pulse-rollout-');
  killEmbeddedServerOnExit(stateDir());
  sim = await startSim({ nodes: ['simA', ...LATER], readyDelayMs: 300 });
  env = await simCliEnv(sim, dir);
});

after(async () => {
  await stopEmbeddedServer(stateDir());
  await sim?.stop();
  await removeDir(dir);
});

test('dry-run: the order, who serves at each step, and the guard refusing a step that leaves no endpoint', async () => {
  const dry = await runCli(['model', 'up', 'datagen', '--node', 'simB,simC,simD', '--dry-run'], env);
  assert.equal(dry.code, 0, dry.stdout + dry.stderr);
  assert.match(dry.stdout, /rollout up datagen on simB → simC → simD/);
  // simA's endpoint is enabled (pulse never deployed there) but no server runs on it: it serves nobody (issue 30 item 2).
  assert.equal(dry.stdout.match(/serving meanwhile: NO endpoint/g)?.length, 3, dry.stdout);
  assert.match(dry.stdout, /^not counted as serving: simA \(enabled in the gateway file, but stopped\)$/m, dry.stdout);
  assert.match(dry.stdout, /diff datagen → simB: .*\(no \.env there\)/, dry.stdout);
  // Nothing was ever deployed: simA serves nothing, so bringing it up takes nothing away (a disruption budget counts
  // only healthy members): not refused.
  const alone = await runCli(['model', 'up', 'datagen', '--node', 'simA,simB', '--dry-run'], env);
  assert.equal(alone.code, 0, alone.stdout + alone.stderr);
  assert.match(alone.stdout, /step 1: simA\n {2}serving meanwhile: NO endpoint\n/, alone.stdout);
  assert.doesNotMatch(alone.stdout, /REFUSED/, alone.stdout);
  assert.deepEqual(counts(), { simA: 0, simB: 0, simC: 0, simD: 0 }, 'a dry-run starts nothing');
});

test('a rollout over three nodes goes in order, each node after the previous gate (verify + smoke)', async () => {
  const r = await runCli(['model', 'up', 'datagen', '--node', 'simB,simC,simD'], env);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /── simB[\s\S]*── simC[\s\S]*── simD/, r.stdout);
  assert.match(r.stdout, /rollout up datagen: SUCCEEDED/);
  assert.equal(r.stdout.match(/succeeded +verify passed, smoke answered/g)?.length, 3, r.stdout);
  assert.deepEqual(counts(), { simA: 0, simB: 1, simC: 1, simD: 1 });
  for (const [a, b] of [['simB', 'simC'], ['simC', 'simD']] as const) {
    const gate = smokeAt(a)[0];
    const next = runAt(b)[0];
    assert.ok(gate && next && gate < next, `${a}'s smoke (${gate}) answered before ${b}'s container ran (${next})`);
  }
  for (const n of LATER) assert.equal((await nodeState(n)).profile, 'datagen');
  const h = await runCli(['model', 'history', '--json'], env);
  const rows = JSON.parse(h.stdout) as { action: string; result: string; node: string | null }[];
  const row = rows.find((x) => x.action === 'rollout');
  assert.ok(row, h.stdout);
  assert.equal(row.node, 'simB,simC,simD');
  assert.match(row.result, /succeeded: simB succeeded, simC succeeded, simD succeeded/);
});

test('the guard refuses a step that would leave the model no enabled endpoint, before anything changes', async () => {
  // simA serves first: it is the one endpoint the gateway reaches, and taking it down would leave none.
  const served = await runCli(['model', 'up', 'best', '--node', 'simA'], env);
  assert.equal(served.code, 0, served.stdout + served.stderr);
  const dry = await runCli(['model', 'up', 'datagen', '--node', 'simA,simB', '--dry-run'], env);
  assert.equal(dry.code, 4, dry.stdout + dry.stderr);
  assert.match(dry.stdout, /step 1: simA\n {2}serving meanwhile: NO endpoint\n {2}REFUSED by the availability guard/, dry.stdout);
  const before = counts();
  const r = await runCli(['model', 'up', 'best', '--node', 'simA,simB'], env);
  assert.equal(r.code, 4, r.stdout + r.stderr);
  assert.match(r.stdout + r.stderr, /no enabled endpoint.*--allow-outage/);
  assert.deepEqual(counts(), before, 'no node touched');
});

test('a failed gate in the middle stops the rollout: the last node is untouched', async () => {
  const before = counts();
  sim!.node('simC').setFailure('wrong-model');
  const r = await runCli(['model', 'up', 'best', '--node', 'simB,simC,simD'], env);
  sim!.node('simC').setFailure('none');
  assert.notEqual(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /rollout up best: FAILED — simC: /, r.stdout);
  assert.match(r.stdout, /simD +skipped/);
  assert.equal(starts('simB'), before['simB']! + 1);
  assert.equal(starts('simD'), before['simD'], 'simD never started');
  assert.equal((await nodeState('simD')).profile, 'datagen', 'simD still runs what it ran');
  assert.equal((await nodeState('simC')).state, 'failed');
});

test('a SIGKILLed worker mid-rollout: the rollout resumes and no node is deployed twice', async () => {
  const before = counts();
  sim!.node('simC').setReadyDelay(3000);
  // simD first (datagen → best), then simC, whose readiness the SIGKILL hits; simB is not in it. --restart: simC
  // already has best's .env and still runs the wrong-model server the failed gate left.
  const run = startCli(['model', 'up', 'best', '--node', 'simD,simC', '--restart'], env);
  await until('simC started', () => starts('simC') > before['simC']!, 120_000).catch((e: unknown) => {
    throw new Error(`${String(e)}; the CLI said: ${run.output()}`);
  });
  const worker = backgroundWorkerPid(stateDir());
  assert.ok(worker !== null, 'the background worker runs the rollout');
  process.kill(worker, 'SIGKILL');
  const r = await run.done;
  sim!.node('simC').setReadyDelay(300);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.deepEqual(counts(), { ...before, simC: before['simC']! + 1, simD: before['simD']! + 1 }, 'one start.sh per node of the rollout, none elsewhere');
  for (const n of ['simC', 'simD']) assert.equal((await nodeState(n)).profile, 'best');
});

/** The rollout's row in history (the newest), once it has closed; undefined while it runs. */
async function rolloutRow(): Promise<{ action: string; result: string; node: string | null } | undefined> {
  const h = await runCli(['model', 'history', '--json'], env);
  return (JSON.parse(h.stdout) as { action: string; result: string; node: string | null }[]).find((x) => x.action === 'rollout');
}

test('cancel --wait on a rollout stops it after the current node and returns only when it has ended: that node finishes, the next is untouched; history has one row for it', async () => {
  const before = counts();
  const rowsBefore = (await rolloutRow())?.result;
  // simB's server does not listen until the stop is recorded: the cancel lands while simB is the current node.
  sim!.node('simB').setControl({ holdReady: true });
  const run = startCli(['model', 'up', 'best', '--node', 'simB,simD', '--restart'], env);
  let c: Awaited<ReturnType<typeof runCli>>;
  try {
    await until('simB started', () => starts('simB') > before['simB']!, 120_000);
    const cancel = startCli(['model', 'cancel', '--node', 'simD', '--wait'], env);
    await waitForOutput(cancel, /stop requested: .* starts no node after the current one/);
    sim!.node('simB').setControl({ holdReady: false });
    c = await cancel.done;
  } finally {
    sim!.node('simB').setControl({ holdReady: false });
  }
  assert.equal(c.code, 0, c.stdout + c.stderr);
  // --wait said how it ended: the rollout had closed when the cancel returned, with simB's gate passed.
  assert.match(c.stdout, /rollout up best: STOPPED/, c.stdout);
  assert.match(c.stdout, /simB +succeeded +verify passed/, c.stdout);
  assert.match(c.stdout, /simD +skipped/, c.stdout);
  const row = await rolloutRow();
  assert.notEqual(row?.result, rowsBefore, 'the rollout had closed when cancel --wait returned');
  assert.match(row?.result ?? '', /^stopped: simB succeeded, simD skipped/);
  const r = await run.done;
  assert.equal(r.code, 13, `cancel said: ${c.stdout}\n${r.stdout}${r.stderr}`);
  assert.match(r.stdout, /rollout up best: STOPPED/);
  assert.equal(starts('simD'), before['simD'], 'simD untouched');
});

test('cancel --now --wait on a rollout: returns once the current node was cancelled and has compensated (failed, endpoint disabled), the next untouched', async () => {
  const before = counts();
  // simB's server does not listen until released: the cancel hits simB's child while it waits for readiness.
  sim!.node('simB').setControl({ holdReady: true });
  const run = startCli(['model', 'up', 'best', '--node', 'simB,simD', '--restart'], env);
  let r: Awaited<typeof run.done>;
  try {
    await until('simB started', () => starts('simB') > before['simB']!, 120_000);
    const c = await runCli(['model', 'cancel', '--node', 'simB', '--now', '--wait'], env);
    assert.equal(c.code, 0, c.stdout + c.stderr);
    assert.match(c.stdout, /cancel requested: rollout of simB, simD .*the node that runs is cancelled too and compensates; no later node starts/);
    assert.match(c.stdout, /rollout up best: CANCELLED/, c.stdout);
    assert.match(c.stdout, /simB +cancelled/, c.stdout);
    assert.match(c.stdout, /simD +skipped/, c.stdout);
    // Read before the rollout's own follower ends: the compensation had run when the cancel returned.
    assert.equal((await nodeState('simB')).state, 'failed');
    const file = JSON.parse(await readFile(path.join(stateDir(), 'gateway-backends.json'), 'utf8')) as { models: { endpoints: { name: string; enabled: boolean }[] }[] };
    assert.equal(file.models[0]?.endpoints.find((e) => e.name === 'simB')?.enabled, false, 'the compensation disabled simB\'s endpoint');
    r = await run.done;
  } finally {
    sim!.node('simB').setControl({ holdReady: false });
  }
  assert.equal(r.code, 13, r.stdout + r.stderr);
  assert.match(r.stdout, /rollout up best: CANCELLED/, r.stdout);
  assert.match(r.stdout, /simB +cancelled/);
  assert.equal(starts('simD'), before['simD'], 'simD untouched');
});

test('--max-parallel 2: both nodes of one step run at once (neither can finish while held), simA serving meanwhile', async () => {
  const before = counts();
  for (const n of ['simB', 'simC']) sim!.node(n).setControl({ holdReady: true });
  const run = startCli(['model', 'up', 'datagen', '--node', 'simB,simC', '--max-parallel', '2', '--restart'], env);
  try {
    await until('simB and simC both started', () => starts('simB') > before['simB']! && starts('simC') > before['simC']!, 120_000).catch((e: unknown) => {
      throw new Error(`${String(e)}; the CLI said: ${run.output()}`);
    });
  } finally {
    for (const n of ['simB', 'simC']) sim!.node(n).setControl({ holdReady: false });
  }
  const r = await run.done;
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /rollout up datagen: SUCCEEDED/);
  assert.deepEqual(counts(), { ...before, simB: before['simB']! + 1, simC: before['simC']! + 1 });
});

test('--all: up and down over every node of nodes.json, the unprotected first and the protected last, --yes once', async () => {
  const nodesFile = env['PULSE_NODES']!;
  // simA protected for this test only: --all must take it last. The worker reads nodes.json on every plan.
  sim!.writeNodesJson(nodesFile, { protected: ['simA'] });
  try {
    const before = counts();
    const refused = await runCli(['model', 'down', '--all', '--allow-outage'], env);
    assert.equal(refused.code, 4, refused.stdout + refused.stderr);
    assert.match(refused.stdout + refused.stderr, /simA.*--yes|--yes.*simA/, refused.stdout + refused.stderr);
    assert.deepEqual(counts(), before, 'a refused rollout touches no node');
    const up = await runCli(['model', 'up', 'datagen', '--all', '--allow-outage', '--yes', '--restart'], env);
    assert.equal(up.code, 0, up.stdout + up.stderr);
    assert.match(up.stdout, /── simB[\s\S]*── simC[\s\S]*── simD[\s\S]*── simA/, up.stdout);
    assert.match(up.stdout, /rollout up datagen: SUCCEEDED/, up.stdout);
    assert.deepEqual(counts(), Object.fromEntries(Object.entries(before).map(([n, c]) => [n, c + 1])), 'one start per node, every node');
    const lastRun = ['simB', 'simC', 'simD', 'simA'].map((n) => runAt(n).at(-1) ?? '');
    assert.deepEqual([...lastRun].sort(), lastRun, `containers ran in the order simB, simC, simD, simA: ${lastRun.join(', ')}`);
    for (const n of ['simA', ...LATER]) assert.deepEqual([(await nodeState(n)).state, (await nodeState(n)).profile], ['up', 'datagen'], n);
    const down = await runCli(['model', 'down', '--all', '--allow-outage', '--yes'], env);
    assert.equal(down.code, 0, down.stdout + down.stderr);
    assert.match(down.stdout, /── simB[\s\S]*── simC[\s\S]*── simD[\s\S]*── simA/, down.stdout);
    assert.match(down.stdout, /rollout down: SUCCEEDED/, down.stdout);
    assert.equal(down.stdout.match(/succeeded +container gone/g)?.length, 4, down.stdout);
    for (const n of ['simA', ...LATER]) assert.equal((await nodeState(n)).state, 'down', n);
  } finally {
    sim!.writeNodesJson(nodesFile, { protected: [] });
  }
});
