/**
 * Crash-resume, one deploy per step: nine simulated nodes each run `up best`, and on each node a different step
 * (1 preflight ... 9 publish) is running when the worker process is SIGKILLed. A new worker process starts; every
 * deploy must finish `up` with exactly one start.sh run, one backup and one .env write by this deploy. One dev
 * server, one sim and one kill serve all nine steps (the heartbeat timeout is waited for once).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import type { DeployResult, UpPlan } from '../../runtime/model/index.js';
import { quietRuntime } from '../workflows/harness.js';
import { exportHistory, historiesWithSecrets } from './histories.js';
import { startRig } from './rig.js';
import type { Rig } from './rig.js';
import { until } from '../helpers/until.js';

const HOLDS: Record<string, string> = {
  spark1: 'runPreflight', spark2: 'makeDirs', spark3: 'stopServer', spark4: 'waitForMemory', spark5: 'writeEnv',
  spark6: 'startServer', spark7: 'pollReadiness', spark8: 'verifyServer', spark9: 'publishState:up',
};
const NODES = Object.keys(HOLDS);
const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'crash-worker.js');

describe('crash-resume: SIGKILL of the worker during each of the nine steps', () => {
  let rig: Rig;
  let dir: string;
  const children: ChildProcess[] = [];
  const spawnWorker = (holds: Record<string, string>): ChildProcess => {
    const log = openSync(path.join(dir, `worker-${children.length}.log`), 'a');
    const child = spawn(process.execPath, [CHILD], {
      stdio: ['ignore', log, log],
      env: { ...process.env, TEMPORAL_ADDRESS: rig.server.address, PULSE_STATE_DIR: rig.stateDir, PULSE_NODES: rig.nodesJson, PULSE_SSH_CONFIG: rig.sim.sshConfigPath, PULSE_CRASH_DIR: dir, PULSE_CRASH_HOLDS: JSON.stringify(holds) },
    });
    children.push(child);
    return child;
  };

  before(async () => {
    quietRuntime();
    dir = mkdtempSync(path.join(os.tmpdir(), 'pulse-crash-'));
    rig = await startRig(NODES);
  });
  after(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await rig?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('each deploy finishes up after the crash: one start.sh run, one backup, one .env write', { timeout: 300_000 }, async () => {
    // A server runs on every node first (datagen), so stop and the memory wait do real work in the crashed deploy.
    const w = await rig.worker();
    // The crashed deploys' plans render a second after these (backup names have second resolution: a new stamp).
    const t0 = Date.now();
    await w.runUntil(Promise.all(NODES.map(async (n) => (await rig.start(rig.upPlan(n, 'datagen', { now: new Date(t0) }))).result())));
    await w.connection.close();
    const startsBefore = new Map(NODES.map((n) => [n, rig.sim.node(n).startShCalls().length]));

    const first = spawnWorker(HOLDS);
    const plans = new Map<string, UpPlan>(NODES.map((n) => [n, rig.upPlan(n, 'best', { now: new Date(t0 + 1000) })]));
    const handles = await Promise.all(NODES.map((n) => rig.start(plans.get(n) as UpPlan)));
    await until('every node to hold its step', () => NODES.every((n) => existsSync(path.join(dir, `held-${n}`))), 120_000);
    first.kill('SIGKILL');
    await new Promise((r) => first.once('exit', r));

    spawnWorker({});
    const results = await Promise.all(handles.map((h) => h.result() as Promise<DeployResult>));
    const calls = readFileSync(path.join(dir, 'calls.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { node: string; step: string; written?: boolean; started?: boolean; pid: number });
    assert.equal(new Set(calls.map((c) => c.pid)).size, 2, 'both workers ran steps');
    for (const [i, n] of NODES.entries()) {
      const r = results[i] as DeployResult;
      const plan = plans.get(n) as UpPlan;
      const why = `${n} (crash in ${HOLDS[n]})`;
      assert.equal(r.ok, true, `${why}: ${r.error}`);
      assert.equal(r.mode, 'full', why);
      assert.equal(rig.sim.node(n).startShCalls().length - (startsBefore.get(n) ?? 0), 1, `${why}: start.sh runs`);
      const mine = rig.backups(n).filter((b) => b === `.env.pulse-bak-${plan.stamp}`);
      assert.equal(mine.length, 1, `${why}: backups of this deploy`);
      assert.equal(r.backupPath, path.join(path.dirname(plan.env.path), `.env.pulse-bak-${plan.stamp}`), `${why}: backup path in the result`);
      assert.equal(calls.filter((c) => c.node === n && c.step === 'write-env' && c.written).length, 1, `${why}: .env writes by the crashed deploy`);
      assert.equal(calls.filter((c) => c.node === n && c.step === 'start' && c.started).length, 1, `${why}: launches by the crashed deploy`);
      assert.match(readFileSync(plan.env.path, 'utf8'), new RegExp(`# pulse-sha256: ${plan.env.identity.sha256}`), why);
    }
    for (const n of ['spark5', 'spark6', 'spark7']) {
      const h = handles[NODES.indexOf(n)];
      if (h) await exportHistory(rig.client, h.workflowId, h.firstExecutionRunId, `up-crash-resume-${HOLDS[n]}`);
    }
    assert.deepEqual(historiesWithSecrets(), []);
  });
});
