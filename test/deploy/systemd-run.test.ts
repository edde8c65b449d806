/**
 * The two systemd units, run: each ExecStart= is expanded as systemd would (Environment=, then the example env
 * file as an operator edits it) and started. The Temporal unit must serve gRPC, the UI and pulse's search
 * attributes from its SQLite file; the worker unit must poll pulse-deploy on it; on SIGTERM (KillMode=mixed: the
 * main process only) each must exit before its TimeoutStopSec, the worker with status 0 so Restart=on-failure
 * leaves a stopped worker stopped.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { SEARCH_ATTRIBUTES, TASK_QUEUE } from '../../workflows/definitions.js';
import { freePort } from '../sim/ports.js';
import { killUnit, readEnvFile, startUnit, unitEnvironment, type UnitProcess, type UserDirs } from './unit-exec.js';
import { last, parseUnit, timeSpanSeconds, type UnitFile } from './unit-file.js';
import { REPO_ROOT } from '../helpers/paths.js';
import { until, type UntilOptions } from '../helpers/until.js';

const dir = path.join(REPO_ROOT, 'deploy/systemd');
const load = (name: string): UnitFile => parseUnit(readFileSync(path.join(dir, name), 'utf8'));

/** How to wait on a unit: fail at once with its output when its process exits, show the output on a timeout. */
function watching(p: UnitProcess, what: string): UntilOptions {
  let exited = false;
  void p.exited.then(() => (exited = true));
  return { everyMs: 250, died: () => (exited ? `${what} never happened (the process exited):\n${p.output()}` : null), detail: p.output };
}

/** A probe that throws (the server is not up yet) answers "not yet". */
const quiet = (probe: () => Promise<boolean>) => (): Promise<boolean> => probe().catch(() => false);

/** SIGTERM to the main process (KillMode=mixed), then wait as systemd would: TimeoutStopSec, then SIGKILL. */
async function stopLikeSystemd(unit: UnitFile, p: UnitProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null; inTime: boolean }> {
  const limitMs = timeSpanSeconds(last(unit, 'Service', 'TimeoutStopSec') ?? '90') * 1000;
  p.child.kill((last(unit, 'Service', 'KillSignal') ?? 'SIGTERM') as NodeJS.Signals);
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), limitMs)));
  const r = await Promise.race([p.exited, timedOut]);
  clearTimeout(timer);
  if (r === null) {
    killUnit(p);
    return { ...(await p.exited), inTime: false };
  }
  return { ...r, inTime: true };
}

test('pulse-temporal.service serves Temporal and its UI, and pulse-worker.service polls it and stops cleanly', { timeout: 180_000 }, async (t) => {
  const home = mkdtempSync(path.join(os.tmpdir(), 'pulse-units-'));
  const dirs: UserDirs = { home, state: path.join(home, '.local', 'state') };
  // What the user manager gives every user service.
  const base = { HOME: home, USER: os.userInfo().username, LOGNAME: os.userInfo().username };
  const temporalUnit = load('pulse-temporal.service');
  const workerUnit = load('pulse-worker.service');
  const running: UnitProcess[] = [];
  try {
    // The operator's temporal.env: the example with this checkout and free ports.
    const [port, uiPort] = [await freePort(), await freePort()];
    const tEnvFile = readEnvFile(path.join(dir, 'temporal.env.example'));
    for (const [k, v] of [['PULSE_HOME', REPO_ROOT], ['TEMPORAL_PORT', String(port)], ['TEMPORAL_UI_PORT', String(uiPort)]] as const) {
      assert.ok(tEnvFile.has(k), `temporal.env.example sets ${k}`);
      tEnvFile.set(k, v);
    }
    const tEnv: Record<string, string> = { ...base, ...unitEnvironment(temporalUnit, dirs, tEnvFile) };
    // systemd creates StateDirectory= (and so the WorkingDirectory inside it) before ExecStart.
    const stateDir = path.join(dirs.state, last(temporalUnit, 'Service', 'StateDirectory')!);
    mkdirSync(stateDir, { recursive: true, mode: 0o700 });
    const temporal = startUnit(temporalUnit, dirs, tEnv);
    running.push(temporal);
    const address = `${tEnv['TEMPORAL_IP']}:${port}`;
    let connection: Connection | null = null;
    await until(`gRPC on ${address}`, quiet(async () => {
      connection = await Connection.connect({ address, connectTimeout: 1000 });
      await connection.workflowService.getSystemInfo({});
      return true;
    }), 60_000, watching(temporal, `gRPC on ${address}`));
    try {
      const sa = await connection!.operatorService.listSearchAttributes({ namespace: 'default' });
      for (const key of SEARCH_ATTRIBUTES) assert.ok(key.name in (sa.customAttributes ?? {}), `search attribute ${key.name} registered`);
    } finally {
      await connection!.close();
    }
    await until(`the Web UI on ${uiPort}`, quiet(async () => (await fetch(`http://127.0.0.1:${uiPort}/`)).ok), 60_000, watching(temporal, `the Web UI on ${uiPort}`));
    assert.ok(existsSync(path.join(stateDir, 'temporal.db')), 'SQLite state lives in the StateDirectory');

    // The operator's worker.env: the example with this checkout and that server.
    const wEnvFile = readEnvFile(path.join(dir, 'worker.env.example'));
    wEnvFile.set('PULSE_HOME', REPO_ROOT);
    wEnvFile.set('TEMPORAL_ADDRESS', address);
    const worker = startUnit(workerUnit, dirs, { ...base, ...unitEnvironment(workerUnit, dirs, wEnvFile) });
    running.push(worker);
    await until(`the worker polling ${TASK_QUEUE}`, () => worker.output().includes(`polling task queue ${TASK_QUEUE} on ${address}`), 60_000, watching(worker, `the worker polling ${TASK_QUEUE}`));

    const w = await stopLikeSystemd(workerUnit, worker);
    t.diagnostic(`worker stop: ${JSON.stringify(w)}`);
    assert.ok(w.inTime, `the worker outlived TimeoutStopSec:\n${worker.output()}`);
    assert.equal(w.code, 0, `a stopped worker exits 0, so Restart=on-failure leaves it stopped:\n${worker.output()}`);
    const s = await stopLikeSystemd(temporalUnit, temporal);
    assert.ok(s.inTime, `the Temporal server outlived TimeoutStopSec:\n${temporal.output()}`);
  } finally {
    running.forEach(killUnit);
    await Promise.all(running.map((p) => p.exited));
    rmSync(home, { recursive: true, force: true });
  }
});
