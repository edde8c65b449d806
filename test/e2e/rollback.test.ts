/**
 * Rollback through the product (issue 14): `up --auto-rollback` on a never-ready or cancelled deploy brings the
 * previous .env back up by itself, `pulse model rollback` restores a backup's exact bytes (and resumes after a
 * SIGKILL of its worker), and the check of a backup refuses what pulse did not write or what was edited by hand,
 * before anything stops. Simulated nodes over real sshd, the embedded Temporal dev server, the CLI as a user runs it.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Sim } from '../sim/index.js';
import { backgroundWorkerPid, runCli, startCli, waitForOutput } from '../helpers/cli.js';
import { savedNodeState, startSimCli, stopSimCli } from '../helpers/sim-cli.js';
import { until } from '../helpers/until.js';

let sim: Sim | null = null;
let dir = '';
let env: NodeJS.ProcessEnv = {};
/** The backup the refusal test edits by hand (after the header was written), which the --force test restores. */
let edited = '';
const stateDir = () => path.join(dir, 'state');

const nodeState = (node: string) => savedNodeState(dir, node);

async function endpointEnabled(node: string): Promise<boolean | undefined> {
  const f = JSON.parse(await readFile(path.join(stateDir(), 'gateway-backends.json'), 'utf8')) as { models: { endpoints: { name: string; enabled: boolean }[] }[] };
  return f.models[0]?.endpoints.find((e) => e.name === node)?.enabled;
}

async function backups(node: string): Promise<string[]> {
  const d = sim!.node(node).recipeDir;
  return (await readdir(d)).filter((f) => f.startsWith('.env.pulse-bak-')).map((f) => path.join(d, f)).sort();
}

/** Makes the next server never ready, and the one after it healthy again (the simulated vLLM reads its control at start, before it logs its args). */
async function nextStartNeverReady(node: string, cli: ReturnType<typeof startCli>): Promise<void> {
  const n = sim!.node(node);
  const starts = n.startShCalls().length;
  n.setFailure('never-ready');
  const logs = (): string => {
    try {
      return n.docker('logs', n.containerName);
    } catch {
      return ''; // no container yet (the old one stopped, the new one not run)
    }
  };
  await until('the never-ready server started', () => n.startShCalls().length > starts && logs().includes('non-default args'), 60_000).catch((e: unknown) => {
    throw new Error(`${String(e)}; start.sh runs ${n.startShCalls().length} (before ${starts}); the CLI said: ${cli.output()}`);
  });
  n.setFailure('none');
}

before(async () => {
  ({ sim, dir, env } = await startSimCli('pulse-rollback-', { nodes: ['simA', 'simB'], readyDelayMs: 300 }));
  const first = await runCli(['model', 'up', 'datagen', '--node', 'simA'], env);
  assert.equal(first.code, 0, first.stdout + first.stderr);
});

after(() => stopSimCli(sim, dir));

test('never ready with --auto-rollback: the node serves the previous profile again, endpoint enabled, two starts, two backups', async () => {
  const good = await nodeState('simA');
  const node = sim!.node('simA');
  const starts = node.startShCalls().length;
  const baks = (await backups('simA')).length;
  const up = startCli(['model', 'up', 'best', '--node', 'simA', '--auto-rollback', '--timeout-s', '4'], env);
  await nextStartNeverReady('simA', up);
  const r = await up.done;
  assert.notEqual(r.code, 0, 'the up itself failed');
  assert.match(r.stdout, /^↺ auto-rollback: back to the \.env that ran before \(workflow pulse-model-simA-rollback\)$/m, r.stdout + r.stderr);
  assert.match(r.stdout, /^ {2}✓ 7\/9 readiness on simA /m, 'the rollback\'s steps in their own section');
  assert.match(r.stdout, /^↺ auto-rollback: ok, datagen serves again, node up$/m);
  assert.match(r.stdout, /^up best on simA: FAILED at readiness \(cause above\), node up; auto-rollback: datagen is back, serving again [\d.]+ s after the stop$/m, r.stdout + r.stderr);
  const s = await nodeState('simA');
  assert.equal(s.state, 'up');
  assert.equal(s.profile, 'datagen');
  assert.deepEqual(s.identity, good.identity, 'the exact .env that ran before');
  // verify checked the restored server: it answers with the previous profile's model and max_model_len.
  assert.equal(s.servedModelName, good.servedModelName);
  assert.equal(s.maxModelLen, good.maxModelLen);
  assert.equal(await endpointEnabled('simA'), true, 'endpoint enabled again');
  assert.equal(node.startShCalls().length, starts + 2, 'start.sh: the failed up, then the rollback');
  assert.equal((await backups('simA')).length, baks + 2, 'the up backed up datagen, the rollback backed up best');
  const h = await runCli(['model', 'history', '--node', 'simA', '--json'], env);
  assert.equal(h.code, 0, h.stdout + h.stderr);
  const rows = JSON.parse(h.stdout) as { action: string; outcome?: string; undid?: string | null; workflowId: string }[];
  const rb = rows.find((x) => x.action === 'rollback');
  assert.ok(rb, h.stdout);
  assert.equal(rb.outcome, 'succeeded');
  const undone = rows.find((x) => x.action === 'up' && x.outcome === 'rolled-back');
  assert.ok(undone && rb.undid?.startsWith(`${undone.workflowId}/`), h.stdout);
});

test('cancel of an auto-rollback deploy: rolled back', async () => {
  const node = sim!.node('simA');
  const up = startCli(['model', 'up', 'best', '--node', 'simA', '--auto-rollback'], env);
  await nextStartNeverReady('simA', up);
  await waitForOutput(up, /7\/9 readiness on simA/);
  const c = await runCli(['model', 'cancel', '--node', 'simA'], env);
  assert.equal(c.code, 0, c.stdout + c.stderr);
  const r = await up.done;
  assert.match(r.stdout, /CANCELLED, node up: readiness: deploy cancelled by request; auto-rollback: datagen is back/, r.stdout + r.stderr);
  assert.equal((await nodeState('simA')).profile, 'datagen');
  assert.equal((await nodeState('simA')).state, 'up');
  assert.ok(node.startShCalls().length > 0);
});

test('rollback --dry-run names the backup, its profile and the key difference; a SIGKILL of its worker during readiness resumes', async () => {
  const node = sim!.node('simA');
  const upBest = await runCli(['model', 'up', 'best', '--node', 'simA'], env);
  assert.equal(upBest.code, 0, upBest.stdout + upBest.stderr);
  const upRun = await nodeState('simA');
  const lkg = upRun.lastKnownGood;
  assert.equal(lkg?.profile, 'best');
  const prior = (await backups('simA')).at(-1)!;
  // --list: the node's backups as --to takes them, newest first, the one the last up replaced marked (issue 30)
  const listed = await runCli(['model', 'rollback', '--node', 'simA', '--list'], env);
  assert.equal(listed.code, 0, listed.stdout + listed.stderr);
  const name = path.basename(prior);
  assert.match(listed.stdout, /^BACKUP +RECIPE +PROFILE +RENDERED \(UTC\)$/m);
  // ... and what happened to the .env each holds: this one served (before the up replaced it).
  assert.match(listed.stdout, new RegExp(`^${name.replace(/[.]/g, '\\.')} +qwen38-flash +datagen +\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ +the last up replaced this; datagen: served \\d\\d:\\d\\dZ$`, 'm'), listed.stdout);
  const listedJson = JSON.parse((await runCli(['model', 'rollback', '--node', 'simA', '--list', '--json'], env)).stdout) as { name: string; path: string; lastUpWrote: boolean }[];
  assert.equal(listedJson[0]?.path, prior, 'newest first');
  assert.equal(listedJson.filter((b) => b.lastUpWrote).length, 1);
  const both = await runCli(['model', 'rollback', '--node', 'simA', '--list', '--to', prior], env);
  assert.equal(both.code, 2, both.stderr);
  const completed = await runCli(['completion', '--list', 'backups', '--node', 'simA'], env);
  assert.equal(completed.stdout.split('\n')[0], name, 'rollback --to completes the node\'s backups');
  const dry = await runCli(['model', 'rollback', '--node', 'simA', '--to', prior, '--dry-run'], env);
  assert.equal(dry.code, 0, dry.stdout + dry.stderr);
  assert.match(dry.stdout, new RegExp(`backup: +${prior.replace(/[.]/g, '\\.')}`));
  assert.match(dry.stdout, /profile: +datagen/);
  assert.match(dry.stdout, /MAX_NUM_SEQS: \S+ → \S+/, 'a key that differs between best and datagen');

  node.setReadyDelay(3000);
  const starts = node.startShCalls().length;
  const rb = startCli(['model', 'rollback', '--node', 'simA', '--to', prior], env);
  await waitForOutput(rb, /7\/9 readiness on simA/);
  // The worker that runs the rollback: the CLI's background worker (or, where none runs, the CLI itself).
  const worker = backgroundWorkerPid(stateDir());
  if (worker !== null) process.kill(worker, 'SIGKILL');
  rb.child.kill('SIGKILL');
  await rb.done;
  const w = await runCli(['model', 'watch', '--node', 'simA'], env);
  node.setReadyDelay(300);
  assert.equal(w.code, 0, w.stdout + w.stderr);
  assert.match(w.stdout, /rollback (datagen )?on simA: ok, node up/);
  assert.equal(node.startShCalls().length, starts + 1, 'one start.sh for the resumed rollback');
  const s = await nodeState('simA');
  assert.equal(s.profile, 'datagen');
  assert.equal(await readFile(node.envPath, 'utf8'), await readFile(prior, 'utf8'), 'the exact bytes of the backup');
  // history links a manual rollback to the deploy it undid, as it does an auto-rollback's (issue 30 item 10)
  const h = await runCli(['model', 'history', '--node', 'simA', '--json', '--limit', '3'], env);
  const rows = JSON.parse(h.stdout) as { action: string; undid: string | null }[];
  assert.equal(rows.find((x) => x.action === 'rollback')?.undid, `${upRun.workflowId}/${upRun.runId}`, h.stdout);
});

test('refused before anything stops: a hand-edited backup, an old .env pulse never wrote (without --force), a protected node without --yes', async () => {
  const node = sim!.node('simA');
  const starts = node.startShCalls().length;
  const before = await readFile(node.envPath, 'utf8');
  edited = (await backups('simA')).at(-1)!;
  await writeFile(edited, (await readFile(edited, 'utf8')).replace(/^MAX_NUM_SEQS=.*$/m, 'MAX_NUM_SEQS="64"'));
  const a = await runCli(['model', 'rollback', '--node', 'simA', '--to', edited], env);
  assert.notEqual(a.code, 0);
  assert.match(a.stdout + a.stderr, /edited after pulse wrote it; nothing was stopped \(add --force to restore it as it is\)/);

  const old = path.join(node.recipeDir, '.env.pulse-bak-20200101T000000Z');
  await writeFile(old, 'MAX_NUM_SEQS=4\nMODEL=/models/x\n');
  const b = await runCli(['model', 'rollback', '--node', 'simA', '--to', old], env);
  assert.notEqual(b.code, 0);
  assert.match(b.stdout + b.stderr, /no pulse header: pulse never wrote it/);
  assert.match(b.stdout + b.stderr, /--force/);
  assert.equal(node.startShCalls().length, starts, 'nothing started');
  assert.equal(await readFile(node.envPath, 'utf8'), before, '.env untouched');
  assert.equal((await nodeState('simA')).state, 'up', 'nothing stopped');

  const nodes = path.join(dir, 'nodes-protected.json');
  sim!.writeNodesJson(nodes, { protected: ['simB'] });
  const c = await runCli(['model', 'rollback', '--node', 'simB', '--to', '.env.pulse-bak-20260101T000000Z'], { ...env, PULSE_NODES: nodes });
  assert.notEqual(c.code, 0);
  assert.match(c.stdout + c.stderr, /simB is protected; add --yes/);
  assert.equal(sim!.node('simB').startShCalls().length, 0, 'simB untouched');
});

test('rollback --force restores the hand-edited backup as it is, and its check step says what it was forced past', async () => {
  assert.ok(edited, 'the refusal test edited a backup');
  const node = sim!.node('simA');
  const starts = node.startShCalls().length;
  const bytes = await readFile(edited, 'utf8');
  const r = await runCli(['model', 'rollback', '--node', 'simA', '--to', edited, '--force'], env);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /check backup on simA \([^)]*\): \S+ from \S+ \(forced: its lines hash to [0-9a-f]{12}, its pulse header says [0-9a-f]{12}: it was edited after pulse wrote it\)/, r.stdout);
  assert.match(r.stdout, /rollback (\S+ )?on simA: ok, node up/, r.stdout);
  assert.equal(node.startShCalls().length, starts + 1, 'one start.sh');
  assert.equal(await readFile(node.envPath, 'utf8'), bytes, 'the exact bytes of the edited backup');
  assert.match(bytes, /^MAX_NUM_SEQS="64"$/m);
  assert.equal((await nodeState('simA')).state, 'up');
});
