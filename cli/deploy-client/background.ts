/**
 * The embedded default's background worker (cli/background-worker.ts) from the CLI's side: reuse the one recorded
 * beside the server when it runs this build for this server, else start one, and wait until it polls; the CLI then
 * only follows. Under a lock in the server's folder, so two CLIs starting at once start one worker.
 */
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { pidAlive, tryPidLock } from '../../runtime/pid.js';
import { liveBackgroundWorker, spawnBackgroundWorker, workerIdleS, type BackgroundWorkerInfo } from '../background-worker.js';
import { stateDir, type PulseTemporal } from '../temporal.js';
import { queuesServed } from './presence.js';
import { workerLogPath } from './worker-log.js';

/** A background worker that polls, or why none could be had. */
export type BackgroundStart = { pid: number; reused: boolean; logFile: string; idleS: number } | { failed: string };

const START_WAIT_MS = 60_000; // a loaded 2-core machine takes seconds to load node, the SDK and the bundle

/** The start lock; a holder still at it after the start wait is taken over (it is stuck, or gone without a trace). */
async function lock(file: string): Promise<() => Promise<void>> {
  const deadline = Date.now() + START_WAIT_MS;
  for (;;) {
    const got = await tryPidLock(file);
    if ('release' in got) return got.release;
    if (Date.now() > deadline) await rm(file, { force: true });
    else await new Promise((r) => setTimeout(r, 200));
  }
}

async function logTail(file: string): Promise<string> {
  const lines = (await readFile(file, 'utf8').catch(() => '')).trim().split('\n');
  return (lines[lines.length - 1] ?? '').slice(0, 300);
}

/** Waits until the queues this worker was asked to poll are served; a reason when it exits or never polls. */
async function untilPolling(t: PulseTemporal, info: BackgroundWorkerInfo, gateway: boolean, exited: () => boolean): Promise<string | null> {
  const deadline = Date.now() + START_WAIT_MS;
  for (;;) {
    const served = await queuesServed(t).catch(() => ({ deploy: false, gateway: false }));
    if (served.deploy && (served.gateway || !gateway)) return null;
    if (exited() || !pidAlive(info.pid)) return `it exited at start${(await logTail(info.logFile)) ? `: ${await logTail(info.logFile)}` : ''}`;
    if (Date.now() > deadline) {
      process.kill(info.pid, 'SIGTERM');
      return `it did not poll within ${START_WAIT_MS / 1000} s`;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** A background worker that polls the pulse queues of the embedded server (`gateway`: the gateway queue too). */
export async function ensureBackgroundWorker(t: PulseTemporal, o: { nodes?: string | undefined; gateway: boolean }): Promise<BackgroundStart> {
  const server = t.target.embedded;
  if (!server) return { failed: 'a configured Temporal server gets no background worker' };
  let idleS: number;
  try {
    idleS = workerIdleS();
  } catch (e) {
    return { failed: (e as Error).message };
  }
  const dir = stateDir();
  const { currentBuildId } = await import('../../worker/versioning.js');
  const { resolveNodesPath } = await import('../../runtime/paths.js');
  const buildId = currentBuildId();
  const release = await lock(path.join(dir, 'temporal', 'worker.lock'));
  try {
    const known = await liveBackgroundWorker(dir);
    const reuse = known && known.buildId === buildId && known.serverPid === server.pid ? known : null;
    const started = reuse ? null : await spawnBackgroundWorker({ stateDir: dir, nodesPath: resolveNodesPath(o.nodes), logFile: workerLogPath(dir), buildId, serverPid: server.pid, gateway: o.gateway });
    const info = reuse ?? started!.info;
    const why = await untilPolling(t, info, o.gateway, started ? started.exited : () => false);
    return why ? { failed: `${why} (log: ${info.logFile})` } : { pid: info.pid, reused: reuse !== null, logFile: info.logFile, idleS };
  } finally {
    await release();
  }
}
