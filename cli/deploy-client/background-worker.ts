/**
 * The background worker of the embedded default: a `pulse worker --background` process that a CLI starts beside
 * the embedded Temporal server when no worker polls, so a deploy never depends on the terminal that started it
 * (Ctrl-C, `--detach`, a closed terminal). Its own session (no controlling terminal, so no SIGHUP), its output in
 * $PULSE_STATE_DIR/logs/worker.log, its pid, build and settings in `<state>/temporal/worker.json` beside server.json. It exits
 * by itself after PULSE_WORKER_IDLE_S seconds with no deploy open, and as soon as its server is gone
 * (cli/deploy-client/worker-lifetime.ts); stopEmbeddedServer stops it first. No Temporal SDK here.
 */
import { spawn } from 'node:child_process';
import { closeSync, existsSync } from 'node:fs';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PulseError } from '../../runtime/errors.js';
import { profilesDir, resolveNodesPath } from '../../runtime/state/paths.js';
import { ownPidAlive, pidAlive } from '../../runtime/state/pid.js';
import { openPrivateAppend, readPrivateFile, stateSubdir } from '../../runtime/state/state-dir.js';

/**
 * The settings the worker's authority reads (worker/deps.ts: nodes.json and profiles; the state dir it writes; the
 * ssh config that names each node's host), as absolute paths, and the node lock's lease it applies; never a secret.
 * A CLI whose settings differ does not share this worker (cli/deploy-client/background.ts): the worker would refuse
 * its plans, or run them with another lease than the command asked for.
 */
export interface WorkerSettings {
  nodes: string;
  profilesDir: string;
  stateDir: string;
  sshConfig: string | null;
  /** PULSE_LOCK_LEASE_S as given (the worker checks it); null: the default. */
  lockLeaseS: string | null;
}

/** How a setting is named to the operator. */
const SETTING_NAMES: Record<keyof WorkerSettings, string> = {
  nodes: 'nodes.json (--nodes or PULSE_NODES)',
  profilesDir: 'PULSE_PROFILES_DIR',
  stateDir: 'PULSE_STATE_DIR',
  sshConfig: 'PULSE_SSH_CONFIG',
  lockLeaseS: 'PULSE_LOCK_LEASE_S',
};

/** This process's worker settings: `nodes` is the command's --nodes, `stateDir` the resolved state dir. */
export function workerSettings(nodes: string | undefined, stateDir: string, env: NodeJS.ProcessEnv = process.env): WorkerSettings {
  const ssh = env['PULSE_SSH_CONFIG'];
  const lease = env['PULSE_LOCK_LEASE_S'];
  return {
    nodes: path.resolve(resolveNodesPath(nodes, env)),
    profilesDir: profilesDir(env),
    stateDir: path.resolve(stateDir),
    sshConfig: ssh ? path.resolve(ssh) : null,
    lockLeaseS: lease ? lease : null,
  };
}

/** One line per setting where the worker's record differs from `ours` (a record without settings: all of them). */
export function settingsDiff(recorded: Partial<WorkerSettings> | undefined, ours: WorkerSettings): string[] {
  const keys = Object.keys(SETTING_NAMES) as (keyof WorkerSettings)[];
  const shown = (v: string | null | undefined): string => (v === undefined ? 'not recorded' : v ?? 'unset');
  return keys
    .filter((k) => recorded?.[k] !== ours[k])
    .map((k) => `${SETTING_NAMES[k]}: the worker's ${shown(recorded?.[k])}, this command's ${shown(ours[k])}`);
}

/** What worker.json records about the background worker. */
export interface BackgroundWorkerInfo {
  pid: number;
  /** The build it polls as (worker/versioning.ts): a CLI of another build starts its own. */
  buildId: string;
  /** The embedded server it serves: it exits when that pid is gone. */
  serverPid: number;
  /** What its authority reads; absent in the record of a worker from before settings were recorded. */
  settings?: WorkerSettings;
  logFile: string;
  startedAt: string;
  /** PULSE_WORKER_IDLE_S as it started with it (`pulse server status`); absent in older records. */
  idleS?: number;
}

export const DEFAULT_IDLE_S = 300;

/** $PULSE_WORKER_IDLE_S: seconds with no deploy open after which the background worker exits (default 300). */
export function workerIdleS(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env['PULSE_WORKER_IDLE_S'];
  if (raw === undefined || raw === '') return DEFAULT_IDLE_S;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 86_400) throw new PulseError('usage', `PULSE_WORKER_IDLE_S must be a whole number of seconds from 1 to 86400, got "${raw}"`);
  return n;
}

export function workerInfoFile(stateDir: string): string {
  return path.join(stateDir, 'temporal', 'worker.json');
}

/** worker.json, read without following a link and only when it is the user's own regular file (else refused). */
async function readInfo(stateDir: string): Promise<BackgroundWorkerInfo | null> {
  const text = readPrivateFile(workerInfoFile(stateDir));
  if (text === null) return null;
  try {
    const v = JSON.parse(text) as BackgroundWorkerInfo;
    return typeof v.pid === 'number' && typeof v.buildId === 'string' ? v : null;
  } catch {
    return null;
  }
}

/**
 * Guards against pid reuse and a planted record: the pid must be the user's own process (never another user's, which
 * stopBackgroundWorker would signal), and on Linux still a `pulse worker --background`.
 */
async function isBackgroundWorker(pid: number): Promise<boolean> {
  if (!ownPidAlive(pid)) return false;
  try {
    const cmd = await readFile(`/proc/${pid}/cmdline`, 'utf8');
    return cmd.includes('worker') && cmd.includes('--background');
  } catch {
    return !existsSync('/proc/self'); // no procfs: trust the pid
  }
}

/** The recorded background worker when it still runs; null otherwise. */
export async function liveBackgroundWorker(stateDir: string): Promise<BackgroundWorkerInfo | null> {
  const info = await readInfo(stateDir);
  return info && (await isBackgroundWorker(info.pid)) ? info : null;
}

/** `<repo>/bin/pulse-cli` (dist/cli/deploy-client/ is three levels below the repo root). */
function cliEntry(): string {
  return path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..', 'bin/pulse-cli');
}

export interface SpawnRequest {
  settings: WorkerSettings;
  logFile: string;
  buildId: string;
  serverPid: number;
  /** Its PULSE_WORKER_IDLE_S (it inherits this process's environment). */
  idleS?: number;
  /** false: poll the deploy queue only (another worker serves the gateway queue). */
  gateway: boolean;
}

/** Starts `pulse worker --background` detached from this process and its terminal, and records it. */
export async function spawnBackgroundWorker(r: SpawnRequest): Promise<{ info: BackgroundWorkerInfo; exited: () => boolean }> {
  stateSubdir(r.settings.stateDir, 'logs');
  const fd = openPrivateAppend(r.logFile);
  const s = r.settings;
  const args = [cliEntry(), 'worker', '--background', '--nodes', s.nodes, ...(r.gateway ? [] : ['--no-gateway'])];
  // Exactly the recorded settings, whatever the cwd: the record says what this worker's authority reads.
  const env: NodeJS.ProcessEnv = { ...process.env, PULSE_STATE_DIR: s.stateDir, PULSE_PROFILES_DIR: s.profilesDir };
  for (const [key, v] of [['PULSE_SSH_CONFIG', s.sshConfig], ['PULSE_LOCK_LEASE_S', s.lockLeaseS]] as const) {
    if (v === null) delete env[key];
    else env[key] = v;
  }
  // detached: setsid(), so neither Ctrl-C (SIGINT to the terminal's process group) nor a closed terminal (SIGHUP) reach it.
  const child = spawn(process.execPath, args, { detached: true, stdio: ['ignore', fd, fd], env });
  closeSync(fd);
  child.unref();
  if (child.pid === undefined) throw new PulseError('internal', 'could not start the background pulse worker', { hint: `see ${r.logFile}` });
  let exited = false;
  child.once('exit', () => (exited = true));
  const info: BackgroundWorkerInfo = { pid: child.pid, buildId: r.buildId, serverPid: r.serverPid, settings: s, logFile: r.logFile, startedAt: new Date().toISOString(), ...(r.idleS !== undefined ? { idleS: r.idleS } : {}) };
  const file = workerInfoFile(s.stateDir);
  const tmp = `${file}.${process.pid}.tmp`;
  await rm(tmp, { force: true });
  await writeFile(tmp, JSON.stringify(info, null, 2) + '\n', { mode: 0o600, flag: 'wx' });
  await rename(tmp, file);
  return { info, exited: () => exited };
}

/** Removes worker.json when it names `pid` (the worker itself, on its way out). */
export async function forgetBackgroundWorker(stateDir: string, pid: number): Promise<void> {
  const info = await readInfo(stateDir);
  if (info?.pid === pid) await rm(workerInfoFile(stateDir), { force: true });
}

/** Stops the background worker (SIGTERM: running steps get the worker's grace time; then SIGKILL); its pid when one ran, else null. */
export async function stopBackgroundWorker(stateDir: string, graceMs = 15_000): Promise<number | null> {
  const info = await liveBackgroundWorker(stateDir);
  if (!info) return null;
  process.kill(info.pid, 'SIGTERM');
  for (let waited = 0; waited < graceMs && pidAlive(info.pid); waited += 100) await new Promise((r) => setTimeout(r, 100));
  if (pidAlive(info.pid)) process.kill(info.pid, 'SIGKILL');
  await rm(workerInfoFile(stateDir), { force: true });
  return info.pid;
}
