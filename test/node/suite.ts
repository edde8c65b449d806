/**
 * The step tests that run twice: over ssh and on the local host (`host: local`, with the sim's bin first on PATH),
 * against the same simulated node.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, readlinkSync, statSync, utimesSync, writeFileSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import { PulseError } from '../../runtime/errors.js';
import type { NodeSession } from '../../runtime/node/types.js';
import {
  followServerLog, makeDirs, probeReadiness, runPreflight, sampleMemory, startServer, stopServer, verifyServer, writeEnv,
} from '../../runtime/steps/index.js';
import type { UpPlan } from '../../runtime/model/index.js';
import { recording } from './helpers.js';
import type { Harness } from './helpers.js';
import { pollUntil } from '../helpers/until.js';

export interface SuiteContext {
  h: () => Harness;
  session: () => NodeSession;
  node: string;
  mode: 'ssh' | 'local';
  /** Memory gate that the node passes when idle (the local host has its own /proc/meminfo). */
  gate: number;
}

/** stop → memory → write-env → start → readiness → verify, asserting each answer. */
export async function fullUp(s: NodeSession, plan: UpPlan, deployId: string): Promise<{ logPath: string; backup: string | null }> {
  assert.equal((await stopServer(s, plan.recipe)).containerGone, true);
  await makeDirs(s, plan);
  const mem = await pollUntil(() => sampleMemory(s, plan.memory.gateGiB), (m) => m.memAvailableGiB >= m.gateGiB, 60);
  assert.ok(mem.memAvailableGiB >= plan.memory.gateGiB, `memory ${mem.memAvailableGiB} < ${plan.memory.gateGiB}`);
  const w = await writeEnv(s, plan);
  const st = await startServer(s, plan, deployId);
  assert.equal(st.started, true);
  assert.match(st.logPath, new RegExp(`/logs/pulse-up-${plan.stamp}\\.log$`));
  const ready = await pollUntil(() => probeReadiness(s, plan), (r) => r.ready);
  assert.equal(ready.ready, true, ready.detail);
  const v = await verifyServer(s, plan, st.logPath);
  assert.equal(v.ok, true, v.problems.join('; '));
  return { logPath: st.logPath, backup: w.backupPath };
}

/** Processes whose cwd is `dir` (how a test finds what a recipe script left running). */
export function processesIn(dir: string): number[] {
  return readdirSync('/proc').filter((p) => /^\d+$/.test(p)).map(Number).filter((pid) => {
    try {
      return readlinkSync(`/proc/${pid}/cwd`) === dir && readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z';
    } catch {
      return false;
    }
  });
}

/** Register the shared tests. */
export function stepSuite(c: SuiteContext): void {
  const plan = (profile = 'datagen', opts: { restart?: boolean } = {}): UpPlan => c.h().plan(c.node, profile, { ...opts, minMemGib: c.gate });

  test(`${c.mode}: full up, then a retried start and write-env change nothing`, async () => {
    const p = plan();
    const pre = await runPreflight(c.session(), p);
    assert.equal(pre.ok, true, JSON.stringify(pre.checks.filter((x) => !x.ok)));
    assert.deepEqual(pre.diff.added.sort(), Object.keys(p.env.values).sort(), 'no .env yet: every key is added');
    await fullUp(c.session(), p, `${c.mode}-deploy-1`);
    const node = c.h().sim.node(c.node);
    const calls = node.startShCalls().length;
    const again = await startServer(c.session(), p, `${c.mode}-deploy-1`);
    assert.equal(again.started, false);
    assert.equal(node.startShCalls().length, calls, 'one start.sh run per deployId');
    assert.ok(node.startShCalls().every((l) => !l.includes('--no-launch')));
    const w = await writeEnv(c.session(), p);
    assert.deepEqual(w, { written: false, backupPath: null, carriedSecretLines: 0 });
  });

  test(`${c.mode}: the readiness follower streams the container log line by line and ends when the container stops`, async () => {
    const s = c.session();
    const p = plan('datagen', { restart: true });
    await fullUp(s, p, `${c.mode}-deploy-follow`);
    const lines: string[] = [];
    const follow = followServerLog(s, p, (l) => lines.push(l));
    await pollUntil(async () => lines, (ls) => ls.some((l) => l === 'INFO:     Application startup complete.'), 600);
    assert.ok(lines.every((l) => !l.includes('\r') && !l.startsWith('@pulse')), 'one line per record, tqdm updates split');
    await stopServer(s, p.recipe);
    assert.equal(await follow, true, 'docker ends the follow when the container stops');
    await fullUp(s, plan(), `${c.mode}-deploy-follow-back`); // the cases below start from the default plan running
  });

  test(`${c.mode}: same identity skips, except after a .env change, a newer mount file, or --restart`, async () => {
    const s = c.session();
    const node = c.h().sim.node(c.node);
    const same = await runPreflight(s, plan());
    assert.equal(same.sameIdentityRunning, true, same.restartReason ?? '');
    assert.deepEqual(same.diff, { added: [], removed: [], changed: [] });
    assert.equal(same.container?.running, true);

    writeFileSync(join(node.paths.tritonCache, 'kernel.bin'), 'x'); // a mounted DIR changes live: no restart
    assert.equal((await runPreflight(s, plan())).sameIdentityRunning, true, 'a new file in a mounted directory needs no restart');

    const mtp = join(node.recipeDir, 'mtp.py');
    utimesSync(mtp, new Date(), new Date()); // a rebuilt mounted file: ctime after the container start
    const mounts = await runPreflight(s, plan());
    assert.equal(mounts.sameIdentityRunning, false);
    assert.match(mounts.restartReason ?? '', /mounted files changed.*mtp\.py/);
    await fullUp(s, plan(), `${c.mode}-deploy-2`);
    assert.equal((await runPreflight(s, plan())).sameIdentityRunning, true);

    chmodSync(node.envPath, 0o600); // any change of the .env inode (ctime) after the start
    const env = await runPreflight(s, plan());
    assert.equal(env.sameIdentityRunning, false);
    assert.match(env.restartReason ?? '', /\.env changed/);

    const restart = await runPreflight(s, plan('datagen', { restart: true }));
    assert.equal(restart.sameIdentityRunning, false);
    assert.equal(restart.restartReason, '--restart given');
  });

  test(`${c.mode}: backup and secret carry-over; the key reaches curl but no output`, async () => {
    const s = c.session();
    const node = c.h().sim.node(c.node);
    const secretKey = `sk-test-${c.mode}-7f3a9c`;
    const secretHf = `hf_${c.mode}_b81d2e`;
    const old = `${readFileSync(node.envPath, 'utf8')}API_KEY=${secretKey}\nHF_TOKEN=${secretHf}\n`;
    writeFileSync(node.envPath, old);
    const rec = recording(s);
    const p = plan('best');
    const pre = await runPreflight(rec.session, p);
    assert.equal(pre.ok, true, JSON.stringify(pre.checks.filter((x) => !x.ok)));
    assert.ok(pre.diff.changed.length > 0 && !pre.diff.removed.includes('API_KEY'));
    const up = await fullUp(rec.session, p, `${c.mode}-deploy-secret`);
    assert.ok(up.backup?.endsWith(`.env.pulse-bak-${p.stamp}`));
    assert.equal(readFileSync(up.backup ?? '', 'utf8'), old);
    assert.equal(statSync(up.backup ?? '').mode & 0o777, 0o600);
    const now = readFileSync(node.envPath, 'utf8');
    assert.equal(statSync(node.envPath).mode & 0o777, 0o600);
    assert.ok(now.startsWith(p.env.text));
    assert.ok(now.endsWith(`API_KEY="${secretKey}"\nHF_TOKEN="${secretHf}"\n`), 'carried, normalised to KEY="value"');
    const models = node.requests().filter((r) => r.path === '/v1/models');
    assert.ok(models.some((r) => r.authorized && r.status === 200), 'readiness and verify sent the bearer key from the node .env');
    assert.deepEqual([models.at(-1)?.authorized, models.at(-1)?.status], [false, 401], "verify's unauthenticated probe got 401");
    for (const r of rec.results) {
      const all = JSON.stringify(r);
      assert.ok(!all.includes(secretKey) && !all.includes(secretHf), `secret in the output of ${r.step}`);
    }
    const v = await verifyServer(s, p, up.logPath);
    assert.deepEqual(v.warnings, []);
    assert.ok(v.proofs.length >= 3 && v.proofs.every((x) => x.found));
  });

  test(`${c.mode}: a dead engine (/health 503 while /v1/models answers 200): verify fails, "engine not healthy"`, async () => {
    const s = c.session();
    const node = c.h().sim.node(c.node);
    const p = plan();
    const up = await fullUp(s, p, `${c.mode}-deploy-dead-engine`);
    node.setControl({ engineDead: true });
    try {
      const v = await verifyServer(s, p, up.logPath);
      assert.equal(v.ok, false);
      assert.deepEqual(v.problems, ['engine not healthy: GET /health answered 503']);
      assert.equal(v.servedModelName, p.expect.servedModelName, '/v1/models alone would have passed it');
    } finally {
      node.setControl({ engineDead: false });
    }
    assert.equal((await verifyServer(s, p, up.logPath)).ok, true, 'the engine back: verify passes');
    await stopServer(s, p.recipe);
  });

  test(`${c.mode}: a server that wants a key the .env does not give: readiness and verify fail as unauthorized`, async () => {
    const s = c.session();
    const node = c.h().sim.node(c.node);
    const p = plan();
    await fullUp(s, p, `${c.mode}-deploy-key-a`);
    await stopServer(s, p.recipe);
    const env = readFileSync(node.envPath, 'utf8');
    writeFileSync(node.envPath, env.replace(/^API_KEY=.*\n/m, '')); // no --api-key: vLLM reads VLLM_API_KEY
    node.setControl({ imageApiKey: 'sk-image-only' }); // VLLM_API_KEY in the image's env
    try {
      const before = node.requests().length;
      await startServer(s, { ...p, restart: true }, `${c.mode}-deploy-key-b`);
      await pollUntil(async () => node.requests().slice(before).some((r) => r.status === 401), (x) => x, 200, 50);
      const unauthorized = (e: unknown) => e instanceof PulseError && e.kind === 'unauthorized' && /401 Unauthorized/.test(e.message) && /API_KEY/.test(e.hint ?? '');
      await assert.rejects(probeReadiness(s, p), (e: unknown) => unauthorized(e) && /sets no API_KEY; vLLM reads --api-key, else VLLM_API_KEY/.test((e as Error).message));
      await assert.rejects(verifyServer(s, p, null), unauthorized);
    } finally {
      node.setControl({ imageApiKey: null });
      await stopServer(s, p.recipe);
      writeFileSync(node.envPath, env);
    }
  });

  test(`${c.mode}: failure paths: missing mount source, stop.sh fails, readiness never comes`, async () => {
    const s = c.session();
    const node = c.h().sim.node(c.node);
    const p = plan('best');
    const missing = { ...p, mounts: [...p.mounts, { src: '/nonexistent/pulse/shard', dst: '/mtp-shard-x', mode: 'ro' as const, from: 'overlay' as const }] };
    const pre = await runPreflight(s, missing);
    assert.equal(pre.ok, false);
    assert.match(pre.checks.find((x) => !x.ok)?.detail ?? '', /mount source \/nonexistent\/pulse\/shard .* is missing/);

    node.setStopMode('fail');
    await assert.rejects(stopServer(s, p.recipe), (e: unknown) => e instanceof PulseError && e.kind === 'script' && /stop\.sh exited 1/.test(e.message) && /simulated failure/.test(e.message));
    assert.equal(node.containers().filter((x) => x.State.Running).length, 0, 'the container is gone even when stop.sh fails');
    node.setStopMode('ok');

    node.setFailure('never-ready');
    await stopServer(s, p.recipe);
    await startServer(s, p, `${c.mode}-deploy-never`);
    for (let i = 0; i < 5; i++) {
      const r = await probeReadiness(s, p);
      assert.equal(r.ready, false);
      await new Promise((res) => setTimeout(res, 150));
    }
    node.setFailure('none');
    await stopServer(s, p.recipe);
  });

  test(`${c.mode}: aborting a running step kills its process group on the node`, async () => {
    const s = c.session();
    const node = c.h().sim.node(c.node);
    node.setStopMode('hang'); // stop.sh execs `sleep 86400` in the recipe dir
    const ac = new AbortController();
    let seen = false;
    const run = stopServer(s, plan().recipe, {
      signal: ac.signal,
      onRecord: (r) => {
        if (r.kind === 'pgid') seen = true;
      },
    });
    await pollUntil(async () => processesIn(node.recipeDir).length, (n) => n > 0 && seen, 100, 50);
    assert.ok(processesIn(node.recipeDir).length > 0, 'stop.sh hangs on the node');
    ac.abort();
    await assert.rejects(run);
    const left = await pollUntil(async () => processesIn(node.recipeDir), (l) => l.length === 0, 40, 50);
    assert.deepEqual(left, [], 'the hanging stop.sh and its sleep are gone');
    node.setStopMode('ok');
  });
}
