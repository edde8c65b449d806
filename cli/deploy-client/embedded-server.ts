/**
 * The embedded default: with no Temporal address configured, pulse runs the pinned `temporal server start-dev`
 * itself (SQLite under the state dir, Web UI on gRPC port + 1000) and reuses it on the next invocation.
 * No Temporal SDK here: `status` calls `runningEmbeddedServer()` and must stay cheap and never start anything.
 */
import { spawn } from 'node:child_process';
import { existsSync, closeSync } from 'node:fs';
import { readFile, writeFile, rename, rm } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PulseError } from '../../runtime/errors.js';
import { ownPidAlive, pidAlive, tryPidLock } from '../../runtime/state/pid.js';
import { checkStateDir, openPrivateAppend, readPrivateFile, stateSubdir } from '../../runtime/state/state-dir.js';
import { stopBackgroundWorker } from './background-worker.js';

/** What `server.json` records about the server pulse started, so the next `pulse` reuses it. */
export interface EmbeddedServer {
  pid: number;
  ip: string;
  port: number;
  uiPort: number;
  address: string;
  dbFile: string;
  logFile: string;
  startedAt: string;
}

const IP = '127.0.0.1';
const SEARCH_ATTRIBUTES = ['PulseNode', 'PulseProfile', 'PulseAction', 'PulseOutcome'];
const START_TIMEOUT_MS = 60_000;

/** `<repo>/.tools/bin/temporal` (dist/cli/deploy-client/ is three levels below the repo root), or $PULSE_TEMPORAL_BIN. */
export function temporalBinary(): string {
  const fromEnv = process.env['PULSE_TEMPORAL_BIN'];
  if (fromEnv) return fromEnv;
  return path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..', '.tools/bin/temporal');
}

/** gRPC port of the embedded server: $PULSE_TEMPORAL_PORT, default 7233. */
export function embeddedPort(): number {
  const raw = process.env['PULSE_TEMPORAL_PORT'];
  if (raw === undefined || raw === '') return 7233;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 64535) {
    throw new PulseError('usage', `PULSE_TEMPORAL_PORT must be a port number below 64536, got "${raw}"`);
  }
  return n;
}

function files(stateDir: string) {
  const dir = path.join(path.resolve(stateDir), 'temporal');
  return { dir, info: path.join(dir, 'server.json'), lock: path.join(dir, 'server.lock'), db: path.join(dir, 'dev.db'), log: path.join(dir, 'server.log') };
}

/** True when something accepts a TCP connection on ip:port within the timeout. */
export function portAnswers(ip: string, port: number, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net.connect({ host: ip, port });
    const done = (ok: boolean) => {
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(timeoutMs, () => done(false));
    sock.once('connect', () => done(true));
    sock.once('error', () => done(false));
  });
}


/** The argument after `flag` in an argv, or undefined. */
function argAfter(argv: string[], flag: string): string | undefined {
  const i = argv.indexOf(flag);
  return i >= 0 ? argv[i + 1] : undefined;
}

/**
 * Is `info` the server pulse started for this state dir? server.json is only a claim: its pid must be a live process
 * of the effective user (never another user's: issue 27) whose command line is `temporal server start-dev` on this
 * state dir's database, on 127.0.0.1 and the recorded port, and its address, UI port, database and log must be the
 * ones pulse gives it. So a stale or planted file can point pulse at neither another user's server or port, nor
 * another UI address, nor a process of the user's that is not this state dir's server. Without procfs the pid is
 * trusted as a live process of anyone.
 */
async function isOwnServer(info: EmbeddedServer, f: ReturnType<typeof files>): Promise<boolean> {
  const port = info.port;
  if (!Number.isInteger(port) || port < 1 || port > 64535) return false;
  if (info.ip !== IP || info.address !== `${IP}:${port}` || info.uiPort !== port + 1000) return false;
  if (info.dbFile !== f.db || info.logFile !== f.log) return false;
  if (!ownPidAlive(info.pid)) return false;
  let argv: string[];
  try {
    argv = (await readFile(`/proc/${info.pid}/cmdline`, 'utf8')).split('\0');
  } catch {
    return !existsSync('/proc/self'); // no procfs: trust the pid
  }
  return argv.includes('start-dev') && argAfter(argv, '--db-filename') === f.db && argAfter(argv, '--ip') === IP && argAfter(argv, '--port') === String(port);
}

/** server.json, read without following a link and only when it is the user's own regular file (else refused). */
function readInfo(infoFile: string): EmbeddedServer | null {
  const text = readPrivateFile(infoFile);
  if (text === null) return null;
  try {
    const v = JSON.parse(text) as EmbeddedServer;
    return typeof v.pid === 'number' && typeof v.port === 'number' ? v : null;
  } catch {
    return null;
  }
}

/**
 * The server pulse started before, when it still runs and answers; null otherwise. Never starts anything. The state
 * dir is checked first (refused when another user owns or can write it), and server.json trusted only as isOwnServer says.
 */
export async function runningEmbeddedServer(stateDir: string): Promise<EmbeddedServer | null> {
  checkStateDir(stateDir);
  const f = files(stateDir);
  const info = readInfo(f.info);
  if (!info || !(await isOwnServer(info, f))) return null;
  return (await portAnswers(info.ip, info.port)) ? info : null;
}

/**
 * The dynamic config of every server pulse starts (here, the test helpers, the systemd unit; deploy/compose's
 * pulse.yaml holds the same for the production server). No outbound version check; and Worker Versioning on
 * (worker/versioning.ts pins each deploy to the build that started it): the defaults of servers 1.29 and 1.32,
 * stated so that turning them off is a visible edit, not a server default that changed.
 * One partition per task queue (the server's default is 4): pulse's queues carry a few tasks a second at most, and the
 * worker presence check asks every partition in turn (runtime/pollers.ts: the root's list alone can miss a live
 * worker, and a CI run once started a second one that way), so one partition is one call per queue.
 */
export const SERVER_DYNAMIC_CONFIG: Readonly<Record<string, boolean | number>> = {
  'frontend.enableServerVersionCheck': false,
  'system.enableDeploymentVersions': true,
  'frontend.workerVersioningWorkflowAPIs': true,
  'matching.numTaskqueueReadPartitions': 1,
  'matching.numTaskqueueWritePartitions': 1,
};

/** SERVER_DYNAMIC_CONFIG (with `over` laid on it: tests of other server settings) as start-dev flags. */
export function dynamicConfigArgs(over: Readonly<Record<string, boolean | number>> = {}): string[] {
  return Object.entries({ ...SERVER_DYNAMIC_CONFIG, ...over }).flatMap(([k, v]) => ['--dynamic-config-value', `${k}=${String(v)}`]);
}

/** Start-dev arguments; exported so tests and the README can show exactly what runs. */
export function startDevArgs(dbFile: string, port: number): string[] {
  const args = ['server', 'start-dev', '--db-filename', dbFile, '--ip', IP, '--port', String(port)];
  args.push('--ui-port', String(port + 1000), '--ui-disable-news-fetch');
  args.push(...dynamicConfigArgs());
  for (const sa of SEARCH_ATTRIBUTES) args.push('--search-attribute', `${sa}=Keyword`);
  return args;
}

/** Reuses the embedded server, or starts it detached and waits until its port answers. */
export async function ensureEmbeddedServer(stateDir: string): Promise<EmbeddedServer> {
  const running = await runningEmbeddedServer(stateDir);
  if (running) return running;
  const f = files(stateDir);
  stateSubdir(stateDir, 'temporal');
  const release = await takeLock(f.lock, stateDir);
  try {
    // Another pulse may have started it while we waited for the lock.
    const again = await runningEmbeddedServer(stateDir);
    if (again) return again;
    return await startServer(f);
  } finally {
    await release();
  }
}

async function startServer(f: ReturnType<typeof files>): Promise<EmbeddedServer> {
  const port = embeddedPort();
  const bin = temporalBinary();
  if (!existsSync(bin)) {
    throw new PulseError('temporal', `the pinned Temporal CLI is missing at ${bin}`, {
      hint: 'run `bash scripts/setup.sh`, or set TEMPORAL_ADDRESS to use another Temporal server',
    });
  }
  for (const p of [port, port + 1000]) {
    if (await portStaysBusy(IP, p)) {
      throw new PulseError('temporal', `port ${p} on ${IP} is in use by a program that pulse did not start`, {
        hint: 'set PULSE_TEMPORAL_PORT to another port, or TEMPORAL_ADDRESS to use that server',
      });
    }
  }
  const logFd = openPrivateAppend(f.log);
  const child = spawn(bin, startDevArgs(f.db, port), { detached: true, stdio: ['ignore', logFd, logFd], cwd: f.dir });
  closeSync(logFd);
  child.unref();
  if (child.pid === undefined) throw new PulseError('temporal', `could not start ${bin}`, { hint: `see ${f.log}` });
  const info: EmbeddedServer = {
    pid: child.pid, ip: IP, port, uiPort: port + 1000, address: `${IP}:${port}`,
    dbFile: f.db, logFile: f.log, startedAt: new Date().toISOString(),
  };
  let exited = false;
  child.once('exit', () => (exited = true));
  await waitForPort(info, () => exited);
  const tmp = `${f.info}.${process.pid}.tmp`;
  await rm(tmp, { force: true });
  await writeFile(tmp, JSON.stringify(info, null, 2) + '\n', { mode: 0o600, flag: 'wx' });
  await rename(tmp, f.info);
  return info;
}

/**
 * A server that just died (crash, SIGKILL) can still hold its sockets for a moment: the kernel releases its memory
 * (so its pid no longer looks like ours) before its files. Give such a port a few seconds before calling it foreign.
 */
async function portStaysBusy(ip: string, port: number, graceMs = 5000): Promise<boolean> {
  const deadline = Date.now() + graceMs;
  while (await portAnswers(ip, port)) {
    if (Date.now() >= deadline) return true;
    await new Promise((r) => setTimeout(r, 200));
  }
  return false;
}

async function waitForPort(info: EmbeddedServer, exited: () => boolean): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (exited()) break;
    if (await portAnswers(info.ip, info.port, 500)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  const tail = await logTail(info.logFile);
  if (!exited()) process.kill(info.pid, 'SIGTERM');
  throw new PulseError('temporal', `the embedded Temporal server did not start on ${info.address}${tail ? `: ${tail}` : ''}`, {
    hint: `see ${info.logFile}`,
  });
}

async function logTail(logFile: string): Promise<string> {
  try {
    const lines = (await readFile(logFile, 'utf8')).trim().split('\n');
    return (lines[lines.length - 1] ?? '').slice(0, 300);
  } catch {
    return '';
  }
}

/** The start lock (a pid lock file): waits for another pulse that is starting the server, up to the start timeout. */
async function takeLock(lockFile: string, stateDir: string): Promise<() => Promise<void>> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    const got = await tryPidLock(lockFile);
    if ('release' in got) return got.release;
    if (Date.now() > deadline) {
      throw new PulseError('temporal', `another pulse${got.holder ? ` (pid ${got.holder})` : ''} is still starting the embedded Temporal server`, {
        hint: `remove ${lockFile} if that process is stuck`,
      });
    }
    await new Promise((r) => setTimeout(r, 250));
    if (await runningEmbeddedServer(stateDir)) continue; // loop takes the (soon free) lock and reuses it
  }
}

/** What stopEmbeddedServer stopped: the server's pid (null: none ran) and the background worker's (null: none ran). */
export interface EmbeddedStop {
  server: number | null;
  worker: number | null;
}

/**
 * Stops the embedded server (`pulse server stop`, tests), and first the background worker beside it
 * (cli/deploy-client/background-worker.ts), which would otherwise go only once it sees the server gone; then removes
 * its server.json, so no record names a pid that is gone. Only a server isOwnServer trusts is signalled.
 */
export async function stopEmbeddedServer(stateDir: string): Promise<EmbeddedStop> {
  const worker = await stopBackgroundWorker(stateDir);
  const f = files(stateDir);
  const info = readInfo(f.info);
  if (!info || !(await isOwnServer(info, f))) return { server: null, worker };
  process.kill(info.pid, 'SIGTERM');
  for (let i = 0; i < 100 && pidAlive(info.pid); i++) await new Promise((r) => setTimeout(r, 100));
  if (pidAlive(info.pid)) process.kill(info.pid, 'SIGKILL');
  for (let i = 0; i < 50 && pidAlive(info.pid); i++) await new Promise((r) => setTimeout(r, 100));
  if (readInfo(f.info)?.pid === info.pid) await rm(f.info, { force: true });
  return { server: info.pid, worker };
}
