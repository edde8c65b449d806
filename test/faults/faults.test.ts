/**
 * Fault injection against the real Temporal dev server, `pulse worker` processes and simulated sshd nodes. Each
 * fault runs a number of full ups (alternating best/datagen so every run really writes a .env and a backup) and
 * every deploy must end succeeded or failed-and-compensated (or be refused, for the lock faults), never stuck,
 * with the invariants of invariants.ts: never two start.sh runs, never a half-written .env, never a lost backup,
 * valid state and gateway files. At the end no secret may appear in any history, worker log or state file.
 *
 * A row whose title says the deploy resumes, reruns or is retried requires every run to succeed (a failed run
 * names its error); a race row requires exactly one side to proceed. Either would pass a pulse that gives up on a
 * crash, or refuses every deploy, if it only checked that each ending is an allowed one.
 *
 * CI runs a reduced count; PULSE_FAULT_RUNS=N runs N per fault (the full table in docs/RELIABILITY.md) and writes
 * bench/results/faults.json. The table of every run also goes to test-output/faults.json.
 *
 * The seed (printed first; PULSE_TEST_SEED=<n> gives it back) picks every random kill and cut point and, in CI, which
 * two of the ten step kills run: by default it is the commit count, so consecutive commits rotate through the pairs
 * and every step's kill is covered within five commits, whatever the date.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { WorkflowExecutionAlreadyStartedError, type WorkflowHandle } from '@temporalio/client';
import type { UpPlan } from '../../runtime/model/index.js';
import { workflowIdFor } from '../../workflows/definitions.js';
import { stopEmbeddedServer } from '../../cli/deploy-client/embedded-server.js';
import { killEmbeddedServerOnExit, runCli, startCli } from '../helpers/cli.js';
import { freePortPair } from '../sim/ports.js';
import { snapshot, violations } from '../helpers/invariants.js';
import { nodeEnv, startStack, type Outcome, type Stack } from '../helpers/stack.js';
import { REPO_ROOT } from '../helpers/paths.js';

const FULL = Number(process.env['PULSE_FAULT_RUNS'] ?? 0);
const runs = (ci: number): number => (FULL > 0 ? FULL : ci);
/** The commit count of the checkout (its default seed), or null without git. */
function commitCount(): number | null {
  try {
    return Number(execFileSync('git', ['rev-list', '--count', 'HEAD'], { cwd: REPO_ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()) || null;
  } catch {
    return null;
  }
}
const SEED = Number(process.env['PULSE_TEST_SEED'] ?? commitCount() ?? Date.now() % 100_000);
let rng = SEED;
/** Deterministic per seed (printed), so a failing run can be repeated. */
function random(): number {
  rng = (rng * 1103515245 + 12345) % 2 ** 31;
  return rng / 2 ** 31;
}
const API_KEY = 'sk-fault-SECRET-91b2c3';
const HF_TOKEN = 'hf_faultSECRET55aa';
/** A deploy that does not end within this time counts as stuck. */
const STUCK_MS = 150_000;

type Status = Outcome['status'] | 'stuck';
interface Row {
  fault: string;
  runs: number;
  counts: Partial<Record<Status, number>>;
  violations: string[];
  /** Why each run that did not succeed ended so (its error from the workflow's history). */
  errors: string[];
}
interface RunEnd {
  status: Status;
  v: string[];
  out?: Outcome | null;
}
const table: Row[] = [];
let stack: Stack;

function record(fault: string, results: RunEnd[]): Row {
  const row: Row = { fault, runs: results.length, counts: {}, violations: [], errors: [] };
  for (const r of results) {
    row.counts[r.status] = (row.counts[r.status] ?? 0) + 1;
    row.violations.push(...r.v);
    if (r.status !== 'succeeded' && r.out !== undefined) row.errors.push(`${r.status}: ${r.out?.error ?? 'no error recorded'}`);
  }
  table.push(row);
  return row;
}

/**
 * Every ending is one of `allowed`, no invariant broke, and with `exactly` each named ending came that many times:
 * a row whose title promises the deploy rides out its fault passes `exactly: { succeeded: runs }`, a race row the
 * count of winners and of refusals it promises.
 */
function assertRow(row: Row, allowed: Status[], exactly: Partial<Record<Status, number>> = {}): void {
  const why = row.errors.length > 0 ? `\n${row.errors.join('\n')}` : '';
  for (const [status, n] of Object.entries(row.counts)) assert.ok(allowed.includes(status as Status), `${row.fault}: ${n} deploy(s) ended ${status}${why}`);
  assert.deepEqual(row.violations, [], `${row.fault}: invariants broken`);
  for (const [status, n] of Object.entries(exactly)) assert.equal(row.counts[status as Status] ?? 0, n, `${row.fault}: ${row.counts[status as Status] ?? 0} deploy(s) ended ${status}, not ${n} (${JSON.stringify(row.counts)})${why}`);
}

/** A row whose fault every deploy must ride out: all of them succeeded. */
function assertAllSucceeded(row: Row): void {
  assertRow(row, ['succeeded'], { succeeded: row.runs });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function endOf(handle: WorkflowHandle): Promise<Outcome | 'stuck'> {
  let timer: NodeJS.Timeout | undefined;
  const stuck = new Promise<'stuck'>((resolve) => (timer = setTimeout(() => resolve('stuck'), STUCK_MS)));
  const r = await Promise.race([stack.outcome(handle), stuck]);
  clearTimeout(timer);
  if (r === 'stuck') await handle.terminate('fault suite: stuck').catch(() => undefined);
  return r;
}

let profileFlip = 0;
/** A full up on `node` (alternating profiles), with `during` run alongside; returns its status and violations. */
async function deploy(node: string, opts: { mutate?: (p: UpPlan) => void; during?: (h: WorkflowHandle) => Promise<void>; envNow?: () => string } = {}): Promise<RunEnd & { out: Outcome | null }> {
  const b = snapshot(stack, node);
  if (opts.envNow) b.env = opts.envNow();
  const plan = stack.planUp(node, profileFlip++ % 2 ? 'datagen' : 'best', { restart: true });
  opts.mutate?.(plan);
  const handle = await stack.start(plan);
  const during = opts.during?.(handle).catch((e: unknown) => e);
  const out = await endOf(handle);
  const err = await during;
  if (err instanceof Error) throw err;
  if (out === 'stuck') return { status: 'stuck', v: [`${node}: stuck for ${STUCK_MS / 1000} s`], out: null };
  return { status: out.status, v: violations(stack, b, out, opts.envNow?.()).map((x) => `${node}: ${x}`), out };
}

async function pendingStarted(h: WorkflowHandle, type: string): Promise<boolean> {
  const d = await h.describe();
  return (d.raw.pendingActivities ?? []).some((p) => p.activityType?.name === type && Number(p.state) === 2);
}

async function waitUntil(cond: () => Promise<boolean>, limitMs = 60_000, everyMs = 100): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error('condition never met');
    await sleep(everyMs);
  }
}

/** The worker that serves now (the last one started), restarted if a fault killed it. */
async function liveWorker(): Promise<void> {
  const w = stack.workers.at(-1);
  if (!w || w.child.exitCode !== null || w.child.signalCode !== null) await stack.startWorker();
}

before(async () => {
  stack = await startStack({ nodes: 20, readyDelayMs: 300, memory: { recoverMs: 300 } });
  for (const n of stack.sim.nodes) writeFileSync(n.envPath, `MAX_NUM_SEQS=2\nAPI_KEY=${API_KEY}\nHF_TOKEN=${HF_TOKEN}\n`, { mode: 0o600 });
  console.log(`# fault suite: ${FULL > 0 ? `full run, ${FULL} per fault` : 'CI run'}, seed ${SEED} (PULSE_TEST_SEED to repeat)`);
});

after(async () => {
  const md = markdown();
  console.log(md);
  const json = `${JSON.stringify({ name: 'faults', at: new Date().toISOString(), full: FULL > 0, runsPerFault: FULL || 'ci', seed: SEED, rows: table }, null, 2)}\n`;
  mkdirSync(path.join(REPO_ROOT, 'test-output'), { recursive: true });
  writeFileSync(path.join(REPO_ROOT, 'test-output', 'faults.json'), json);
  if (FULL > 0) writeFileSync(path.join(REPO_ROOT, 'bench', 'results', 'faults.json'), mergedFullRun());
  await stack?.stop();
});

/** The full-run result: this run's rows replace the rows of the same faults in the last full-run file (so a
 * re-run of one fault with --test-name-pattern updates its row and keeps the others). */
function mergedFullRun(): string {
  const file = path.join(REPO_ROOT, 'bench', 'results', 'faults.json');
  let old: Row[] = [];
  try {
    old = (JSON.parse(readFileSync(file, 'utf8')) as { rows: Row[] }).rows;
  } catch {
    old = [];
  }
  const mine = new Set(table.map((r) => r.fault));
  const rows = [...old.filter((r) => !mine.has(r.fault)), ...table];
  return `${JSON.stringify({ name: 'faults', at: new Date().toISOString(), full: true, runsPerFault: FULL, seed: SEED, rows }, null, 2)}\n`;
}

function markdown(): string {
  const cols: Status[] = ['succeeded', 'failed-compensated', 'failed-untouched', 'refused', 'failed-uncompensated', 'stuck'];
  const head = `| fault | runs | ${cols.join(' | ')} | invariant violations |\n|---|---|${cols.map(() => '---').join('|')}|---|`;
  return [head, ...table.map((r) => `| ${r.fault} | ${r.runs} | ${cols.map((c) => r.counts[c] ?? 0).join(' | ')} | ${r.violations.length} |`)].join('\n');
}

test('worker SIGKILL at random points of staggered deploys: each ends succeeded or compensated, one start.sh', async () => {
  const nodes = ['spark2', 'spark3', 'spark4', 'spark5'];
  const results = [];
  for (let round = 0; round < Math.ceil(runs(4) / nodes.length); round++) {
    await liveWorker();
    const killAt = 300 + random() * 3500;
    const killer = (async () => {
      await sleep(killAt);
      await stack.workers.at(-1)?.kill('SIGKILL');
      await stack.startWorker();
    })();
    results.push(...(await Promise.all(nodes.map(async (n, i) => {
      await sleep(i * 600); // staggered: the kill lands in a different step of each deploy
      return deploy(n);
    }))));
    await killer;
  }
  assertAllSucceeded(record('worker SIGKILL (random point)', results));
});

/** The worker's log line at the start of each step (activities log `<step> on <node>`, publish `state <s> for <node>`). */
const STEP_LINES = ['preflight on', 'mkdir on', 'stop on', 'memory wait on', 'write .env on', 'state starting for', 'start on', 'readiness wait on', 'verify on', 'state up for'];

test('worker SIGKILL as each step starts: the step reruns on a new worker, one start.sh, a complete .env', async () => {
  // The full run: every step (each costs its heartbeat timeout: 30 s, 5 s for a wait). CI: the seed's pair of the
  // five (preflight+mkdir, stop+memory wait, ...), so five consecutive seeds (commits) kill at every step, and the
  // readiness wait in every run: a resumed wait is the headline's case, and costs 5 s.
  const pair = SEED % (STEP_LINES.length / 2);
  const steps = FULL > 0 ? STEP_LINES : [...new Set([...STEP_LINES.slice(pair * 2, pair * 2 + 2), 'readiness wait on'])];
  const results = [];
  for (const step of steps) {
    await liveWorker();
    const w = stack.workers.at(-1);
    if (!w) throw new Error('no worker');
    const from = w.log().length;
    const re = new RegExp(`${step.replace('.', '\\.')} spark15\\b`);
    results.push(await deploy('spark15', {
      during: async () => {
        await waitUntil(async () => re.test(w.log().slice(from)), 60_000, 5);
        await w.kill('SIGKILL');
        await stack.startWorker();
      },
    }));
  }
  assertAllSucceeded(record(`worker SIGKILL as a step starts (${FULL > 0 ? 'every step' : steps.join(', ')})`, results));
});

test('a worker whose clock is 40 minutes ahead resumes the readiness wait: the budget is kept, the deploy succeeds', async () => {
  const node = stack.sim.node('spark16');
  const preload = path.join(REPO_ROOT, 'dist/test/faults/skewed-clock.js');
  const results = [];
  for (let i = 0; i < runs(1); i++) {
    await liveWorker();
    // Still loading when the resumed attempt starts: the server holds its listen until the skewed worker has begun
    // the resumed wait (the dead worker is noticed after the wait's heartbeat timeout), however long that takes.
    node.setControl({ holdReady: true });
    let r: Awaited<ReturnType<typeof deploy>>;
    try {
      r = await deploy('spark16', {
        during: async (h) => {
          await waitUntil(() => pendingStarted(h, 'pollReadiness'));
          await sleep(2000); // a few probes, so the checkpoint holds some elapsed time
          await stack.workers.at(-1)?.kill('SIGKILL');
          const skewed = await stack.startWorker({ NODE_OPTIONS: `--import=${preload}`, PULSE_TEST_CLOCK_SKEW_MS: String(40 * 60_000) });
          await waitUntil(async () => /readiness wait on spark16\b/.test(skewed.log()), 120_000);
          await sleep(1000); // the resumed attempt probes the still-held server at least once
          node.setControl({ holdReady: false });
        },
      });
    } finally {
      node.setControl({ holdReady: false });
    }
    if (r.status !== 'succeeded') r.v.push(`spark16: the resumed wait ended ${r.status}: ${r.out?.error ?? ''}`);
    results.push(r);
    await stack.workers.at(-1)?.kill('SIGKILL'); // the next tests get a worker with a true clock
  }
  assertAllSucceeded(record('worker clock 40 min ahead resumes the readiness wait', results));
});

test('Temporal server restarted mid-deploy (SQLite kept, same port): the deploy resumes', async () => {
  const results = [];
  for (let i = 0; i < runs(1); i++) {
    await liveWorker();
    stack.sim.node('spark6').setReadyDelay(3000);
    results.push(await deploy('spark6', {
      during: async (h) => {
        await waitUntil(() => pendingStarted(h, 'pollReadiness'));
        await stack.restartServer(1500);
      },
    }));
  }
  stack.sim.node('spark6').setReadyDelay(300);
  assertAllSucceeded(record('Temporal server restart mid-deploy', results));
});

test('ssh link cut mid-step (sshd sessions killed): the step is retried and stays idempotent', async () => {
  const results = [];
  for (let i = 0; i < runs(2); i++) {
    await liveWorker();
    results.push(await deploy('spark7', {
      during: async () => {
        for (let k = 0; k < 3; k++) {
          await sleep(200 + random() * 1200);
          stack.sim.node('spark7').killSshSessions();
        }
      },
    }));
  }
  assertAllSucceeded(record('ssh link cut mid-step', results));
});

test('stop.sh hangs: the deploy waits in step 3; cancel ends it compensated and kills the hung script', async () => {
  const node = stack.sim.node('spark8');
  const results = [];
  for (let i = 0; i < runs(1); i++) {
    await liveWorker();
    node.setStopMode('hang');
    results.push(await deploy('spark8', {
      during: async (h) => {
        await waitUntil(() => pendingStarted(h, 'stopServer'));
        await sleep(2000);
        await h.cancel();
      },
    }));
    node.setStopMode('ok');
  }
  const row = record('stop.sh hangs (then cancel)', results);
  assertRow(row, ['failed-compensated']);
  // Cancelling killed the hung stop.sh's process group on the node.
  await waitUntil(async () => !node.processes().some((pid) => readCmdline(pid).includes('stop.sh')), 20_000);
});

test('the container dies during readiness: failed and compensated, one start.sh', async () => {
  const node = stack.sim.node('spark9');
  const results = [];
  for (let i = 0; i < runs(1); i++) {
    await liveWorker();
    node.setReadyDelay(1500);
    node.setFailure('die-during-readiness');
    results.push(await deploy('spark9'));
    node.setFailure('none');
    node.setReadyDelay(300);
  }
  assertRow(record('container dies during readiness', results), ['failed-compensated']);
});

test('memory never frees: the memory wait times out, compensated, the old .env untouched and no start', async () => {
  const node = stack.sim.node('spark10');
  const results = [];
  for (let i = 0; i < runs(1); i++) {
    await liveWorker();
    node.setMemory({ pinnedAvailableGiB: 50 });
    const before = snapshot(stack, 'spark10');
    const r = await deploy('spark10', { mutate: (p) => (p.memory.timeoutS = 3) });
    node.setMemory({ pinnedAvailableGiB: null });
    if (snapshot(stack, 'spark10').env !== before.env) r.v.push('spark10: the .env changed although the memory gate never opened');
    if (snapshot(stack, 'spark10').startCalls !== before.startCalls) r.v.push('spark10: start.sh ran although the memory gate never opened');
    results.push(r);
  }
  assertRow(record('memory never frees', results), ['failed-compensated']);
});

test('the container log rotates during readiness and verify: the deploy still ends cleanly', async () => {
  const node = stack.sim.node('spark11');
  const results = [];
  for (let i = 0; i < runs(1); i++) {
    await liveWorker();
    node.setReadyDelay(1200);
    let done = false;
    const r = await deploy('spark11', {
      during: async (h) => {
        void h.result().finally(() => (done = true)).catch(() => undefined);
        while (!done) {
          await sleep(150);
          try {
            node.rotateLog();
          } catch {
            /* no container yet */
          }
        }
      },
    });
    results.push(r);
    node.setReadyDelay(300);
  }
  assertAllSucceeded(record('log rotates during readiness/verify', results));
});

test('disk full when writing .env (1 MiB tmpfs over the recipe dir, filled): failed, compensated, old .env intact', async () => {
  const node = stack.sim.node('spark12');
  const dir = node.recipeDir;
  const results = [];
  for (let i = 0; i < runs(1); i++) {
    await liveWorker();
    // Inside the node's own mount namespace: copy the recipe dir into a small tmpfs mounted over it, then fill it.
    node.exec(`set -e; rm -rf /tmp/pulse-full-$$; cp -a ${dir} /tmp/pulse-full-copy; mount -t tmpfs -o size=1m tmpfs ${dir}; cp -a /tmp/pulse-full-copy/. ${dir}/; rm -rf /tmp/pulse-full-copy; dd if=/dev/zero of=${dir}/.fill bs=64k 2>/dev/null || true`);
    const envNow = (): string => node.exec(`cat ${dir}/.env`);
    try {
      const r = await deploy('spark12', { envNow });
      const leftovers = node.exec(`ls -A ${dir} | grep -c 'pulse-tmp\\|pulse-bak-tmp' || true`).trim();
      if (leftovers !== '0') r.v.push(`spark12: ${leftovers} temp file(s) left in the recipe dir`);
      if (!/write-env|cannot write|disk full/.test(r.out?.error ?? '')) r.v.push(`spark12: failed elsewhere than the .env write: ${r.out?.error ?? r.status}`);
      results.push(r);
    } finally {
      node.exec(`umount ${dir}`);
    }
  }
  assertRow(record('disk full when writing .env', results), ['failed-compensated']);
});

test('20 deploys to 20 nodes at once: all succeed, one start.sh each, every state file and the gateway file valid', async () => {
  await liveWorker();
  const names = stack.sim.nodes.map((n) => n.name);
  const results = [];
  for (let round = 0; round < Math.max(1, Math.floor(runs(1) / 5)); round++) results.push(...(await Promise.all(names.map((n) => deploy(n)))));
  const row = record('20 deploys to 20 nodes at once', results);
  row.fault = `20 deploys to 20 nodes at once (${results.length / 20} round${results.length > 20 ? 's' : ''})`;
  assertAllSucceeded(row);
  const files = await stack.stateFiles();
  for (const n of names) assert.ok(files.has(`nodes/${n}.json`), n);
  const gw = JSON.parse(files.get('gateway-backends.json') ?? '{}') as { models: { endpoints: { name: string }[] }[] };
  assert.deepEqual(gw.models[0]?.endpoints.map((e) => e.name).sort(), [...names].sort());
});

test('a second deploy to a busy node is refused with the lock; the first one ends cleanly', async () => {
  const results = [];
  for (let i = 0; i < runs(1); i++) {
    await liveWorker();
    const second = { refused: false };
    const r = await deploy('spark13', {
      during: async () => {
        await sleep(300);
        try {
          await stack.start(stack.planUp('spark13', 'datagen', { restart: true }));
        } catch (e) {
          if (e instanceof WorkflowExecutionAlreadyStartedError) second.refused = true;
          else throw e;
        }
      },
    });
    results.push(r, second.refused ? { status: 'refused' as const, v: [] } : { status: 'failed-uncompensated' as const, v: ['spark13: a second deploy started on a busy node'] });
  }
  // Exactly one proceeded in each run: the first succeeded, the second was refused (not both refused).
  assertRow(record('second deploy to a busy node', results), ['succeeded', 'refused'], { succeeded: runs(1), refused: runs(1) });
});

test('up and down racing on one node through the CLI: exactly one runs, the other is refused busy', async () => {
  const results: RunEnd[] = [];
  for (let i = 0; i < runs(2); i++) {
    await liveWorker();
    const b = snapshot(stack, 'spark14');
    const up = ['model', 'up', i % 2 ? 'datagen' : 'best', '--node', 'spark14', '--restart', '--detach'];
    const down = ['model', 'down', '--node', 'spark14', '--detach'];
    const [first, second] = i % 2 ? [down, up] : [up, down];
    const [r1, r2] = await Promise.all([runCli(first, stack.env), sleep(random() * 200).then(() => runCli(second, stack.env))]);
    const codes = [r1.code, r2.code].sort();
    const started = [r1, r2].filter((r) => r.code === 0).length;
    if (started !== 1 || !codes.includes(4)) results.push({ status: 'failed-uncompensated', v: [`spark14: exit codes ${r1.code}/${r2.code}: ${r1.stderr}${r2.stderr}`] });
    const out = await endOf(stack.client.workflow.getHandle(workflowIdFor('spark14')));
    if (out === 'stuck') results.push({ status: 'stuck', v: ['spark14: stuck'] });
    else results.push({ status: out.status, v: violations(stack, b, out), out }, { status: 'refused', v: [] });
  }
  assertRow(record('up/down racing on one node (CLI)', results), ['succeeded', 'refused'], { succeeded: runs(2), refused: runs(2) });
});

/** Hand-made inputs (the attack of issue 10): each names a field that reaches the node or the gateway file. */
const TAMPERS: { what: string; mutate: (p: UpPlan) => void }[] = [
  { what: 'env.path', mutate: (p) => (p.env.path = '/tmp/pulse-fault-pwned.env') },
  { what: 'recipe.start', mutate: (p) => (p.recipe.start = '/tmp/pulse-fault-evil.sh') },
  { what: 'target.ssh', mutate: (p) => (p.target.ssh = '198.51.100.66') },
  { what: 'fleet', mutate: (p) => p.fleet.forEach((f) => (f.gatewayUrl = 'http://198.51.100.66:9999/v1')) },
  { what: 'env.text', mutate: (p) => (p.env.text += 'EXTRA_DOCKER_ARGS="-v /:/host"\n') },
];

test('a hand-made workflow input (tampered plan): refused by the worker before anything runs on the node', async () => {
  const node = stack.sim.node('spark17');
  const results = [];
  for (let i = 0; i < runs(2); i++) {
    await liveWorker();
    const t = TAMPERS[Math.floor(random() * TAMPERS.length)] ?? TAMPERS[0];
    if (!t) throw new Error('no tamper');
    const calls = { docker: node.dockerCalls().length, stop: node.stopShCalls().length };
    const r = await deploy('spark17', { mutate: t.mutate });
    if (node.dockerCalls().length !== calls.docker || node.stopShCalls().length !== calls.stop) r.v.push(`spark17: the node was touched by a tampered ${t.what}`);
    if (r.status === 'refused' && !new RegExp(`plan refused by the worker: .*${t.what.replace('.', '\\.')}`).test(r.out?.error ?? '')) r.v.push(`spark17: the refusal does not name ${t.what}: ${r.out?.error ?? ''}`);
    results.push(r);
  }
  assertRow(record('hand-made workflow input (tampered plan)', results), ['refused']);
});

test('two controllers (two Temporal servers) deploy one node at once: exactly one proceeds, the other is refused by the node lock', async () => {
  // Controller A: the stack's server and worker. Controller B: a CLI with its own state dir, so its own embedded dev
  // server and background worker, as on a second controller host; neither server sees the other's workflow-ID lock.
  const dirB = path.join(stack.dir, 'controller-b');
  const envB = { ...stack.env, TEMPORAL_ADDRESS: '', PULSE_STATE_DIR: path.join(dirB, 'state'), PULSE_TEMPORAL_PORT: String(await freePortPair()) };
  killEmbeddedServerOnExit(envB.PULSE_STATE_DIR);
  const results: RunEnd[] = [];
  try {
    await runCli(['model', 'status', '--node', 'spark18', '--no-http'], envB); // B's server up before the race
    for (let i = 0; i < runs(2); i++) {
      await liveWorker();
      // The first deploy to take the lock holds it while its server loads, and the server holds its listen until the
      // other side has ended (the loser is refused at once): however long B's CLI takes to start (node, its embedded
      // server, its background worker), the two really overlap on the node, with no 8 s ready delay guessing it.
      const release = (): void => void stack.sim.node('spark18').setControl({ holdReady: false });
      stack.sim.node('spark18').setControl({ holdReady: true });
      const b0 = snapshot(stack, 'spark18');
      const handle = await stack.start(stack.planUp('spark18', 'best', { restart: true }));
      const [outA, rB] = await Promise.all([
        endOf(handle).finally(release),
        sleep(random() * 300).then(() => runCli(['model', 'up', 'datagen', '--node', 'spark18', '--restart'], envB)).finally(release),
      ]);
      if (outA === 'stuck') {
        results.push({ status: 'stuck', v: ['spark18: stuck'] });
        continue;
      }
      const bRefused = rB.code !== 0 && /locked by deploy pulse-model-spark18\/\S+ from controller \S+ \(up\) since \S+, lease until \S+; nothing was changed/.test(rB.stdout + rB.stderr);
      const statusB: Status = rB.code === 0 ? 'succeeded' : bRefused ? 'refused' : 'failed-uncompensated';
      const v = violations(stack, b0, outA).map((x) => `spark18: ${x}`);
      const winners = [outA.status, statusB].filter((st) => st === 'succeeded').length;
      const refusals = [outA.status, statusB].filter((st) => st === 'refused').length;
      if (winners !== 1 || refusals !== 1) v.push(`spark18: A ${outA.status} (${outA.error ?? ''}), B exit ${rB.code}: ${rB.stdout.slice(-400)}${rB.stderr.slice(-400)}`);
      const starts = stack.sim.node('spark18').startShCalls().length - b0.startCalls;
      if (starts !== 1) v.push(`spark18: start.sh ran ${starts} times`);
      const served = /^# pulse-profile: (\S+)$/m.exec(nodeEnv(stack.sim, 'spark18'))?.[1];
      if (served !== (statusB === 'succeeded' ? 'datagen' : 'best')) v.push(`spark18: the node serves ${served ?? 'nothing'}, not the winner's profile`);
      results.push({ status: outA.status, v }, { status: statusB, v: [] });
    }
  } finally {
    await stopEmbeddedServer(envB.PULSE_STATE_DIR).catch(() => undefined);
    stack.sim.node('spark18').setControl({ holdReady: false });
  }
  assertRow(record('two controllers on one node', results), ['succeeded', 'refused'], { succeeded: runs(2), refused: runs(2) });
});

const GATEWAY_FILE = (): string => path.join(stack.stateDir, 'gateway-backends.json');

/** How many endpoints really serve now: enabled in the gateway file (not by the fallback) and answering GET /health 200. */
async function servingNow(): Promise<{ n: number; who: string[] } | null> {
  let eps: { name: string; baseUrl: string; enabled: boolean; reason?: string }[];
  try {
    eps = (JSON.parse(readFileSync(GATEWAY_FILE(), 'utf8')) as { models: { endpoints: typeof eps }[] }).models[0]?.endpoints ?? [];
  } catch {
    return null; // being replaced right now
  }
  const on = eps.filter((e) => e.enabled && !(e.reason ?? '').startsWith('kept enabled by the fallback'));
  const ok = await Promise.all(on.map((e) => fetch(`${e.baseUrl.replace(/\/v1$/, '')}/health`, { signal: AbortSignal.timeout(500) }).then((r) => r.status === 200, () => false)));
  const who = on.filter((_, i) => ok[i]).map((e) => e.name);
  return { n: who.length, who };
}

/** Samples servingNow every 100 ms until `done` settles; returns the samples with no serving endpoint. */
async function sampleWhile(done: Promise<unknown>): Promise<{ samples: number; zero: string[] }> {
  let over = false;
  void done.finally(() => (over = true));
  const zero: string[] = [];
  let samples = 0;
  while (!over) {
    const at = new Date().toISOString();
    const s = await servingNow();
    if (s !== null) {
      samples += 1;
      if (s.n === 0) zero.push(at);
    }
    await sleep(100);
  }
  return { samples, zero };
}

/** The node locks on `node` still held (state=held) in its lock dir. */
function heldLocks(node: string): string[] {
  const dir = path.join(stack.sim.node(node).paths.homeState, 'locks');
  let files: string[];
  try {
    files = readdirSync(dir).filter((f) => f.endsWith('.lock'));
  } catch {
    return [];
  }
  return files.filter((f) => /^state=held$/m.test(readFileSyncSafe(path.join(dir, f))));
}

/** The end of one node of a rollout, judged from the node itself and the state dir (invariants.ts), plus its lock. */
function nodeEnd(node: string, b: ReturnType<typeof snapshot>, want: string | null): { status: Status; v: string[] } {
  const state = (() => {
    try {
      return JSON.parse(readFileSync(path.join(stack.stateDir, 'nodes', `${node}.json`), 'utf8')) as { state: string; profile: string | null };
    } catch {
      return null;
    }
  })();
  const starts = stack.sim.node(node).startShCalls().length - b.startCalls;
  const status: Outcome['status'] = starts === 0 && state?.state !== 'failed' ? 'failed-untouched'
    : state?.state === 'up' && (want === null || state.profile === want) ? 'succeeded' : state?.state === 'failed' ? 'failed-compensated' : 'failed-uncompensated';
  const out: Outcome = { status, result: null, error: null };
  const v = violations(stack, b, out).map((x) => `${node}: ${x}`);
  if (status === 'succeeded' && starts !== 1) v.push(`${node}: up with ${starts} start.sh runs, not one deploy's`);
  if (status === 'failed-uncompensated') v.push(`${node}: half-done: state ${state?.state ?? 'missing'}, ${starts} start.sh`);
  const held = heldLocks(node);
  if (held.length > 0) v.push(`${node}: node lock still held (${held.join(', ')})`);
  return { status, v };
}

/**
 * Issue 27 item 4: two rollouts at once must never leave the model with no serving endpoint (without
 * --allow-outage). Here spark3 is the gateway node, spark5 listens on every address (both reachable), spark4 on
 * loopback (unreachable, like spark2 without a tunnel). Shape 1 is the review's: `up --node spark4,spark5` and `up
 * --node spark3,spark5` at once; shape 2 the plainest race: each rollout's first step takes one of the two serving
 * nodes (`--node spark3,spark4` and `--node spark5,spark4`; one node alone would be a plain up, not guarded). Sampled
 * every 0.1 s (the gateway file's enabled endpoints that answer /health 200).
 */
test('two rollouts at once: sampled every 0.1 s, never zero serving endpoints without --allow-outage', async () => {
  const plain = readFileSync(stack.nodesFile, 'utf8');
  stack.sim.writeNodesJson(stack.nodesFile, {
    protected: [], gatewayNode: 'spark3',
    transform: (j) => {
      const nodes = j['nodes'] as Record<string, { env: Record<string, string> }>;
      nodes['spark5']!.env['BIND'] = '0.0.0.0';
      return j;
    },
  });
  const results: RunEnd[] = [];
  try {
    const shapes = [[['spark4', 'spark5'], ['spark3', 'spark5']], [['spark3', 'spark4'], ['spark5', 'spark4']]];
    for (let i = 0; i < runs(1) * shapes.length; i++) {
      await liveWorker();
      for (const n of ['spark3', 'spark4', 'spark5']) {
        const out = await endOf(await stack.start(stack.planUp(n, 'best', { restart: true })));
        assert.ok(out !== 'stuck' && out.status === 'succeeded', `${n} came up before the round: ${JSON.stringify(out)}`);
      }
      const before = await servingNow();
      assert.deepEqual(before?.who.sort(), ['spark3', 'spark5'], 'spark3 and spark5 serve before the rollouts');
      const [a, b] = shapes[i % shapes.length]!;
      const both = Promise.all([
        runCli(['model', 'up', 'datagen', '--node', a!.join(','), '--restart'], stack.env),
        sleep(random() * 200).then(() => runCli(['model', 'up', 'datagen', '--node', b!.join(','), '--restart', '--yes'], stack.env)),
      ]);
      const sampled = await sampleWhile(both);
      const ends = await both;
      for (const r of ends) {
        const busy = /is busy: another deploy holds/.test(r.stdout);
        if (r.code === 0) results.push({ status: 'succeeded', v: [] });
        else if (r.code === 4 || busy) results.push({ status: 'refused', v: [] });
        else results.push({ status: 'failed-uncompensated', v: [`rollout exit ${r.code}: ${r.stdout.slice(-600)}${r.stderr.slice(-600)}`] });
      }
      const v = sampled.zero.length > 0 ? [`no endpoint served at ${sampled.zero.length} of ${sampled.samples} samples (first ${sampled.zero[0]}): ${ends.map((r) => r.stdout.slice(-400)).join(' | ')}`] : [];
      // Exactly one rollout proceeded: the guard (or the busy node) turned the other away, and did not turn both.
      const proceeded = ends.filter((r) => r.code === 0).length;
      if (proceeded !== 1) v.push(`${proceeded} of the 2 rollouts proceeded, not exactly 1: ${ends.map((r) => `exit ${r.code}: ${r.stdout.slice(-300)}`).join(' | ')}`);
      results.push({ status: 'succeeded', v }); // the round itself: its samples
      console.log(`# two rollouts, shape ${(i % shapes.length) + 1}: exits ${ends.map((r) => r.code).join('/')}, ${sampled.samples} samples, ${sampled.zero.length} with none serving`);
    }
  } finally {
    writeFileSync(stack.nodesFile, plain);
  }
  assertRow(record('two rollouts at once (sampled every 0.1 s)', results), ['succeeded', 'refused']);
});

/** Issue 27 item 10: `cancel --now` while a rollout's node waits for readiness. */
test('cancel --now mid-rollout: the running node ends failed with its endpoint disabled and no lock held; the next is untouched', async () => {
  const results: RunEnd[] = [];
  for (let i = 0; i < runs(1); i++) {
    await liveWorker();
    const [first, next] = ['spark10', 'spark11'];
    const b1 = snapshot(stack, first!);
    const b2 = snapshot(stack, next!);
    stack.sim.node(first!).setControl({ holdReady: true });
    const run = startCli(['model', 'up', i % 2 ? 'datagen' : 'best', '--node', `${first},${next}`, '--restart'], stack.env);
    let r: Awaited<typeof run.done>;
    try {
      await waitUntil(async () => stack.sim.node(first!).startShCalls().length > b1.startCalls, 120_000);
      await sleep(random() * 1000);
      const c = await runCli(['model', 'cancel', '--node', first!, '--now'], stack.env);
      assert.equal(c.code, 0, c.stdout + c.stderr);
      r = await run.done;
    } finally {
      stack.sim.node(first!).setControl({ holdReady: false });
    }
    const one = nodeEnd(first!, b1, null);
    const endpoint = (JSON.parse(readFileSync(GATEWAY_FILE(), 'utf8')) as { models: { endpoints: { name: string; enabled: boolean; reason?: string }[] }[] }).models[0]?.endpoints.find((e) => e.name === first);
    if (one.status === 'failed-compensated' && endpoint?.enabled && !(endpoint.reason ?? '').startsWith('kept enabled by the fallback')) one.v.push(`${first}: failed but its endpoint is enabled`);
    if (r.code !== 13) one.v.push(`the rollout exited ${r.code}, not 13 (cancelled): ${r.stdout.slice(-600)}`);
    results.push(one);
    const two = nodeEnd(next!, b2, null);
    if (two.status !== 'failed-untouched') two.v.push(`${next}: touched after the cancel (${two.status})`);
    if (readFileSyncSafe(stack.sim.node(next!).envPath) !== (b2.env ?? '')) two.v.push(`${next}: .env changed`);
    results.push(two);
  }
  assertRow(record('cancel --now mid-rollout', results), ['failed-compensated', 'failed-untouched']);
});

/** Issue 27 item 10: --max-parallel 2 while the only worker is SIGKILLed at a random point. */
test('--max-parallel 2 under a worker SIGKILL: each node ends with exactly one deploy\'s effects, none locked or half-done', async () => {
  const results: RunEnd[] = [];
  const nodes = ['spark6', 'spark7', 'spark8', 'spark9'];
  for (let i = 0; i < runs(1); i++) {
    await liveWorker();
    const profile = i % 2 ? 'best' : 'datagen';
    const bs = nodes.map((n) => snapshot(stack, n));
    for (const n of nodes) stack.sim.node(n).setReadyDelay(1500);
    const run = startCli(['model', 'up', profile, '--node', nodes.join(','), '--max-parallel', '2', '--restart'], stack.env);
    const at = 1000 + random() * 6000;
    await sleep(at);
    const w = stack.workers.at(-1)!;
    await w.kill('SIGKILL');
    console.log(`# max-parallel 2: worker SIGKILLed ${Math.round(at)} ms in`);
    await stack.startWorker();
    const r = await run.done;
    for (const n of nodes) stack.sim.node(n).setReadyDelay(300);
    nodes.forEach((n, k) => {
      const e = nodeEnd(n, bs[k]!, profile);
      if (r.code === 0 && e.status !== 'succeeded') e.v.push(`${n}: the rollout succeeded but the node ended ${e.status}`);
      results.push(e);
    });
    if (r.code !== 0) results.push({ status: 'failed-uncompensated', v: [`the rollout exited ${r.code}: ${r.stdout.slice(-800)}${r.stderr.slice(-400)}`] });
  }
  assertAllSucceeded(record('--max-parallel 2 under a worker SIGKILL', results));
});

/** Issue 27 item 5: a dead engine (/health 503, /v1/models 200) is healed by a real restart, not a same-identity no-op. */
test('a dead engine is healed by a real restart: one stop, one start.sh, /health 200 after', async () => {
  const results: RunEnd[] = [];
  const node = 'spark12';
  for (let i = 0; i < runs(1); i++) {
    await liveWorker();
    const up = await endOf(await stack.start(stack.planUp(node, 'best', { restart: true })));
    assert.ok(up !== 'stuck' && up.status === 'succeeded', JSON.stringify(up));
    const n = stack.sim.node(node);
    const b = snapshot(stack, node);
    const stops = n.stopShCalls().length;
    n.setControl({ engineDead: true });
    const v: string[] = [];
    try {
      const on = await runCli(['model', 'watchdog', 'on', '--node', node, '--every', '2s', '--after', '1', '--heal'], stack.env);
      assert.equal(on.code, 0, on.stdout + on.stderr);
      const healed = async (): Promise<boolean> => {
        const s = JSON.parse(readFileSyncSafe(path.join(stack.stateDir, 'nodes', `${node}.json`)) || '{}') as { watchdog?: { healsTotal?: number; judged?: string } };
        return (s.watchdog?.healsTotal ?? 0) >= 1 && s.watchdog?.judged === 'ok';
      };
      await waitUntil(healed, 120_000, 300).catch(() => v.push(`${node}: never judged ok after a heal: ${readFileSyncSafe(path.join(stack.stateDir, 'nodes', `${node}.json`))}`));
    } finally {
      await runCli(['model', 'watchdog', 'off', '--node', node], stack.env);
      n.setControl({ engineDead: false });
    }
    const starts = n.startShCalls().length - b.startCalls;
    if (starts !== 1) v.push(`${node}: the heal ran start.sh ${starts} times, not once`);
    if (n.stopShCalls().length - stops !== 1) v.push(`${node}: the heal ran stop.sh ${n.stopShCalls().length - stops} times, not once`);
    if (n.stopShCalls().length - stops === 1 && starts === 1) {
      const h = await fetch(`http://127.0.0.1:${n.vllmPort}/health`).then((r) => r.status, () => 0);
      if (h !== 200) v.push(`${node}: /health ${h} after the heal`);
    }
    results.push({ status: v.length === 0 ? 'succeeded' : 'failed-uncompensated', v });
  }
  assertAllSucceeded(record('dead engine healed by the watchdog (a real restart)', results));
});

test('no secret in any history, worker log or state file of the fault runs', async () => {
  const runsSeen = await stack.allRuns();
  assert.ok(runsSeen.length >= 20);
  for (const { workflowId, runId } of runsSeen) {
    const text = await stack.historyText(workflowId, runId);
    assert.equal(text.includes(API_KEY) || text.includes(HF_TOKEN), false, `history of ${workflowId}/${runId}`);
  }
  for (const w of stack.workers) assert.equal(w.log().includes(API_KEY) || w.log().includes(HF_TOKEN), false, `worker ${w.pid} log`);
  for (const [f, text] of await stack.stateFiles()) assert.equal(text.includes(API_KEY) || text.includes(HF_TOKEN), false, f);
});

function readCmdline(pid: number): string {
  return readFileSyncSafe(`/proc/${pid}/cmdline`).replaceAll('\0', ' ');
}

function readFileSyncSafe(p: string): string {
  try {
    return readFileSync(p, 'utf8');
  } catch {
    return '';
  }
}
