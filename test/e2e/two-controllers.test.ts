/**
 * Two controllers, one node: two `pulse` CLIs with their own PULSE_STATE_DIR (so two embedded Temporal dev servers,
 * as on two controller hosts) deploy the same simulated node. The workflow-ID lock cannot see across servers; the
 * node lock (runtime/scripts/lock.sh) must: exactly one deploy proceeds, the other is refused naming the holder with
 * nothing changed. Also: a killed deploy's lock goes stale after its lease and a new deploy then proceeds; the killed
 * deploy, resumed later, finds its lock lost and fails without touching the node; a resumed deploy keeps its own
 * lock; `status` shows the holder.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { stopEmbeddedServer } from '../../cli/deploy-client/embedded-server.js';
import { startSim, type Sim } from '../sim/index.js';
import { backgroundWorkerPid, killEmbeddedServerOnExit, removeDir, runCli, simCliEnv, startCli, tempDir, waitForOutput } from '../helpers/cli.js';

let sim: Sim;
let dir = '';
let envA: NodeJS.ProcessEnv = {};
let envB: NodeJS.ProcessEnv = {};
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const stateOf = (env: NodeJS.ProcessEnv, node: string): { state: string; profile: string | null } | null => {
  const f = path.join(env['PULSE_STATE_DIR'] ?? '', 'nodes', `${node}.json`);
  return existsSync(f) ? (JSON.parse(readFileSync(f, 'utf8')) as { state: string; profile: string | null }) : null;
};
const servedProfile = (node: string): string | undefined => /^# pulse-profile: (\S+)$/m.exec(readFileSync(sim.node(node).envPath, 'utf8'))?.[1];
/** Controller A's host dies: its CLI and the background worker beside its embedded server (the server's data stays). */
function killController(run: ReturnType<typeof startCli>, env: NodeJS.ProcessEnv): void {
  run.child.kill('SIGKILL');
  const worker = backgroundWorkerPid(env['PULSE_STATE_DIR'] ?? '');
  if (worker !== null) process.kill(worker, 'SIGKILL');
}
const HOLDER = /locked by deploy pulse-model-(\w+)\/[0-9a-f-]{36} from controller \S+ \(up\) since \d{4}-\d\d-\d\dT[\d:]+Z, lease until \d{4}-\d\d-\d\dT[\d:]+Z; nothing was changed/;

before(async () => {
  dir = await tempDir('pulse-two-ctl-');
  sim = await startSim({ nodes: ['simA', 'simB', 'simC'], readyDelayMs: 300 });
  envA = await simCliEnv(sim, path.join(dir, 'a'));
  envB = await simCliEnv(sim, path.join(dir, 'b'));
  for (const e of [envA, envB]) killEmbeddedServerOnExit(e['PULSE_STATE_DIR'] ?? '');
});

after(async () => {
  for (const e of [envA, envB]) await stopEmbeddedServer(e['PULSE_STATE_DIR'] ?? '').catch(() => undefined);
  await sim?.stop();
  await removeDir(dir);
});

test('two controllers start up on one node at nearly the same time: exactly one proceeds, the other is refused naming it', async () => {
  // Warm both embedded servers first, so the two ups really race on the node and not on server start-up.
  await Promise.all([runCli(['model', 'status', '--node', 'simC'], envA), runCli(['model', 'status', '--node', 'simC'], envB)]);
  sim.node('simA').setReadyDelay(2000);
  const starts = sim.node('simA').startShCalls().length;
  const a = startCli(['model', 'up', 'best', '--node', 'simA', '--restart'], envA);
  const b = startCli(['model', 'up', 'datagen', '--node', 'simA', '--restart'], envB);
  const [ra, rb] = await Promise.all([a.done, b.done]);
  const ok = [ra, rb].filter((r) => r.code === 0);
  assert.equal(ok.length, 1, `A: ${ra.code} ${ra.stdout}${ra.stderr}\nB: ${rb.code} ${rb.stdout}${rb.stderr}`);
  const [winner, loser, winEnv, loseEnv, profile] = ra.code === 0 ? [ra, rb, envA, envB, 'best'] : [rb, ra, envB, envA, 'datagen'];
  assert.match(winner.stdout, new RegExp(`up ${profile} on simA: ok, node up`));
  assert.match(loser.stdout + loser.stderr, HOLDER);
  assert.doesNotMatch(loser.stdout, /✓ 3\/9 stop|→ 3\/9 stop/); // refused before anything ran: no preflight, no stop
  assert.equal(sim.node('simA').startShCalls().length - starts, 1, 'start.sh ran once');
  // The state agrees with what the node serves; the refused controller wrote no state for the node.
  assert.equal(stateOf(winEnv, 'simA')?.state, 'up');
  assert.equal(stateOf(winEnv, 'simA')?.profile, profile);
  assert.equal(servedProfile('simA'), profile);
  assert.equal(stateOf(loseEnv, 'simA'), null);
  sim.node('simA').setReadyDelay(300);
});

test('a resumed deploy keeps its own lock; status (from the other controller) shows who holds it', async () => {
  // Still loading while both status calls run and until the resumed wait has begun: the server holds its listen.
  sim.node('simB').setControl({ holdReady: true });
  after(() => void sim.node('simB').setControl({ holdReady: false }));
  const starts = sim.node('simB').startShCalls().length;
  const run = startCli(['model', 'up', 'best', '--node', 'simB', '--restart'], envA);
  after(() => void run.child.kill('SIGKILL')); // a failed assertion below must not leave this deploy to the next test
  await waitForOutput(run, /→ 7\/9 readiness on simB/);
  const st = await runCli(['model', 'status', '--node', 'simB', '--json', '--no-http'], envB);
  const lock = (JSON.parse(st.stdout) as { nodes: { lock: { live: boolean; deployId: string; host: string; action: string; state: string } | null }[] }).nodes[0]?.lock;
  assert.equal(lock?.live, true, st.stdout);
  assert.equal(lock?.state, 'held');
  assert.match(lock?.deployId ?? '', /^pulse-model-simB\/[0-9a-f-]{36}$/);
  assert.equal(lock?.action, 'up');
  const text = await runCli(['model', 'status', '--node', 'simB', '--no-http'], envB);
  assert.match(text.stdout.replace(/\n\s+/g, ' '), /lock\s+held by deploy pulse-model-simB\/[0-9a-f-]{36} from controller \S+ \(up\) since \S+, lease until \S+/);
  // The controller dies mid-readiness; the next pulse on it (watch provides a worker) resumes the same deploy.
  killController(run, envA);
  await run.done;
  const watch = startCli(['model', 'watch', '--node', 'simB'], envA);
  await waitForOutput(watch, /7\/9 readiness on simB/);
  sim.node('simB').setControl({ holdReady: false });
  const w = await watch.done;
  assert.equal(w.code, 0, w.stdout + w.stderr);
  assert.match(w.stdout, /up best on simB: ok, node up/);
  assert.equal(sim.node('simB').startShCalls().length - starts, 1);
  const end = JSON.parse((await runCli(['model', 'status', '--node', 'simB', '--json', '--no-http'], envB)).stdout) as { nodes: { lock: { state: string; live: boolean } | null }[] };
  assert.equal(end.nodes[0]?.lock?.state, 'released');
});

test('a killed deploy: its lock goes stale after the lease, a new deploy proceeds; the old one, resumed, fails untouched', async () => {
  // The lease is the worker's setting: A's idle background worker, started without it, is replaced by one with it
  // (docs/DEPLOYS.md). 12 s: B's refused up below may have to start B's background worker first on a loaded machine.
  const lease = { PULSE_LOCK_LEASE_S: '12' };
  // B's background worker gets the lease now, on a node no other case uses: replaced by B's refused up below, after
  // A is killed, its start ate into the 12 s on a loaded CI machine and the lease ran out before B's lock step.
  const warm = await runCli(['model', 'up', 'datagen', '--node', 'simC'], { ...envB, ...lease });
  assert.equal(warm.code, 0, warm.stdout + warm.stderr);
  sim.node('simB').setReadyDelay(60_000);
  const run = startCli(['model', 'up', 'datagen', '--node', 'simB', '--restart'], { ...envA, ...lease });
  await waitForOutput(run, /→ 7\/9 readiness on simB/);
  killController(run, envA); // controller A is gone: no worker renews its lock
  await run.done;
  const refused = await runCli(['model', 'up', 'best', '--node', 'simB', '--restart'], { ...envB, ...lease });
  assert.notEqual(refused.code, 0);
  assert.match(refused.stdout + refused.stderr, HOLDER);
  // The lease runs out with no renewal: wait for the very second the refusal named (the node's clock is this
  // machine's; lock.sh counts the lock live while its whole-second now < until), not a fixed 13 s.
  const until = Date.parse(/lease until (\S+Z); nothing was changed/.exec(refused.stdout + refused.stderr)?.[1] ?? '');
  assert.ok(Number.isFinite(until), refused.stdout + refused.stderr);
  while (Date.now() < until + 250) await sleep(Math.min(1000, until + 250 - Date.now()));
  sim.node('simB').setReadyDelay(300);
  const starts = sim.node('simB').startShCalls().length;
  const b = await runCli(['model', 'up', 'best', '--node', 'simB', '--restart'], { ...envB, ...lease });
  assert.equal(b.code, 0, b.stdout + b.stderr);
  assert.equal(servedProfile('simB'), 'best');
  // Controller A comes back: its deploy resumes, finds the lock lost, and fails without touching the node.
  const w = await runCli(['model', 'watch', '--node', 'simB'], { ...envA, ...lease });
  assert.notEqual(w.code, 0);
  assert.match(w.stdout + w.stderr, /lost its lock/);
  assert.equal(sim.node('simB').startShCalls().length - starts, 1, 'only B started');
  assert.equal(servedProfile('simB'), 'best');
  assert.equal(sim.node('simB').containers().filter((c) => c.State.Running).length, 1);
  assert.equal(stateOf(envB, 'simB')?.state, 'up');
});
