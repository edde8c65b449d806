/**
 * The embedded default's background worker (cli/deploy-client/background-worker.ts) from the CLI's side: reuse the one recorded
 * beside the server when it runs this build for this server, else start one, and wait until it polls; the CLI then
 * only follows. Under a lock in the server's folder, so two CLIs starting at once start one worker.
 */
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { pidAlive, tryPidLock } from '../../runtime/state/pid.js';
import { PulseError } from '../../runtime/errors.js';
import { liveBackgroundWorker, settingsDiff, spawnBackgroundWorker, stopBackgroundWorker, workerIdleS, workerSettings, type BackgroundWorkerInfo } from './background-worker.js';
import { stateDir, type PulseTemporal } from './temporal.js';
import { openDeployNodes, queuesServed } from './presence.js';
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
  const buildId = currentBuildId();
  const release = await lock(path.join(dir, 'temporal', 'worker.lock'));
  try {
    const known = await liveBackgroundWorker(dir);
    // Reused whatever its settings: a command that starts a deploy has matched them first (matchBackgroundWorker),
    // and a follower (watch) follows a deploy that was started for this worker's settings.
    const reuse = known && known.buildId === buildId && known.serverPid === server.pid ? known : null;
    const started = reuse ? null : await spawnBackgroundWorker({ settings: workerSettings(o.nodes, dir), logFile: workerLogPath(dir), buildId, serverPid: server.pid, idleS, gateway: o.gateway });
    const info = reuse ?? started!.info;
    const why = await untilPolling(t, info, o.gateway, started ? started.exited : () => false);
    return why ? { failed: `${why} (log: ${info.logFile})` } : { pid: info.pid, reused: reuse !== null, logFile: info.logFile, idleS };
  } finally {
    await release();
  }
}

/**
 * Before a deploy starts beside the embedded server: the background worker must read the files this command read,
 * or it refuses the plan. One with other settings (worker.json) is stopped when no deploy is open, so the follow
 * starts one with this command's (the line returned says so); while a deploy is open it is refused, naming each
 * differing setting. Null: nothing to say (no such worker, or the same settings).
 */
export async function matchBackgroundWorker(t: PulseTemporal, nodes: string | undefined): Promise<string | null> {
  const server = t.target.embedded;
  if (!server) return null;
  const dir = stateDir();
  const release = await lock(path.join(dir, 'temporal', 'worker.lock'));
  try {
    const known = await liveBackgroundWorker(dir);
    if (!known || known.serverPid !== server.pid) return null;
    const differ = settingsDiff(known.settings, workerSettings(nodes, dir));
    if (differ.length === 0) return null;
    const open = await openDeployNodes(t).catch(() => null); // cannot tell: busy
    if (open === null || open.length > 0) {
      const which = open?.length ? ` (on ${open.join(', ')})` : '';
      const watch = open?.length === 1 ? `pulse model watch --node ${open[0]}` : 'pulse model watch --node <node>';
      throw new PulseError('refused', `the background pulse worker (pid ${known.pid}) runs a deploy${which} and has other settings than this command, so it would refuse this plan: ${differ.join('; ')}`, {
        hint: `wait until that deploy ends (follow it: ${watch}), then run this command again: an idle worker is replaced by one with this command's settings`,
      });
    }
    await stopBackgroundWorker(dir);
    return `the background pulse worker (pid ${known.pid}) had other settings (${differ.join('; ')}) and no deploy open: stopped it, so a worker with this command's settings runs the deploy`;
  } finally {
    await release();
  }
}
