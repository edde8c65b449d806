/**
 * A production-shaped Temporal cluster for tests, built from the same files as the native recipe
 * (docs/PRODUCTION.md "C. native"): PostgreSQL in a data dir of its own on a loopback port with password auth (the
 * password in a 0600 file), both schemas created and migrated by deploy/native/temporal-setup.sh (as auto-setup
 * does), and the built temporal-server started by deploy/native/temporal-server.sh on deploy/native/temporal.yaml,
 * the namespace registered with the compose retention. Every log goes to a file in the cluster's dir, never to
 * the test output; every process is killed on teardown and on exit.
 *
 *   const cluster = await startCluster();                 // one server process with all four services
 *   try { ... cluster.address ... } finally { await cluster.stop(); }
 *
 * Parts for other shapes: startPostgres (stop/kill/start keep the data), allocatePorts + startTemporalProcess
 * (one process per service: `services: ['history']`; `env` adds settings such as TEMPORAL_TLS_*), setupSchema,
 * registerNamespace, waitForFrontend.
 */
import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Connection } from '@temporalio/client';
import { freePort } from '../sim/ports.js';
import { REPO_ROOT } from './paths.js';
import { until } from './until.js';

const execFileP = promisify(execFile);

export const NATIVE_DIR = path.join(REPO_ROOT, 'deploy', 'native');
export const SETUP_SCRIPT = path.join(NATIVE_DIR, 'temporal-setup.sh');
export const SERVER_SCRIPT = path.join(NATIVE_DIR, 'temporal-server.sh');
export const ROLE_SCRIPT = path.join(NATIVE_DIR, 'postgres-role.sh');
export const UI_SCRIPT = path.join(NATIVE_DIR, 'temporal-ui.sh');
export const UI_BIN = path.join(REPO_ROOT, '.tools', 'bin', 'temporal-ui-server');
export const SERVER_BIN = path.join(REPO_ROOT, '.tools', 'bin', 'temporal-server');
export const SQL_TOOL_BIN = path.join(REPO_ROOT, '.tools', 'bin', 'temporal-sql-tool');
/** The database user (as POSTGRES_USER in docker-compose.yml and deploy/native/temporal.env). */
export const DB_USER = 'temporal';

const live = new Set<ChildProcess>();
process.on('exit', () => {
  for (const p of live) p.kill('SIGKILL');
});

/** PostgreSQL's bin dir (the newest /usr/lib/postgresql/<major>/bin, as Debian installs it). */
export function postgresBinDir(): string {
  const root = '/usr/lib/postgresql';
  const majors = existsSync(root) ? readdirSync(root).filter((d) => existsSync(path.join(root, d, 'bin', 'postgres'))) : [];
  majors.sort((a, b) => Number(b) - Number(a));
  if (!majors[0]) throw new Error('PostgreSQL is not installed (/usr/lib/postgresql/*/bin/postgres): run scripts/setup.sh');
  return path.join(root, majors[0], 'bin');
}

function requireBuilt(): void {
  for (const bin of [SERVER_BIN, SQL_TOOL_BIN]) {
    if (!existsSync(bin)) throw new Error(`${bin} is missing: run scripts/setup.sh (it builds the Temporal server once)`);
  }
}

/** PostgreSQL refuses to run as root: as root, run it as the `postgres` user (Debian's package creates it). */
async function postgresIds(): Promise<{ uid: number; gid: number } | null> {
  if (process.getuid?.() !== 0) return null;
  const [uid, gid] = await Promise.all([execFileP('id', ['-u', 'postgres']), execFileP('id', ['-g', 'postgres'])]);
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/** A child process whose stdout and stderr append to `logFile`. */
function spawnLogged(cmd: string, args: string[], logFile: string, opts: { env?: NodeJS.ProcessEnv; ids?: { uid: number; gid: number } | null } = {}): ChildProcess {
  const fd = openSync(logFile, 'a', 0o600);
  try {
    const child = spawn(cmd, args, { stdio: ['ignore', fd, fd], env: opts.env ?? process.env, ...(opts.ids ?? {}) });
    live.add(child);
    child.once('exit', () => live.delete(child));
    return child;
  } finally {
    closeSync(fd);
  }
}

async function stopChild(child: ChildProcess, signal: NodeJS.Signals, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill(signal);
  const t = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(t);
}

const exitedEarly = (child: ChildProcess, what: string, logFile: string) => (): string | null =>
  child.exitCode !== null || child.signalCode !== null ? `${what} exited (${child.exitCode ?? child.signalCode}); its log: ${logFile}` : null;

export interface Postgres {
  host: '127.0.0.1';
  port: number;
  user: string;
  /** The 0600 file holding the password (as the compose secret deploy/compose/secrets/postgres_password). */
  passwordFile: string;
  dataDir: string;
  logFile: string;
  /** Fast shutdown (SIGINT), data kept. Idempotent. */
  stop(): Promise<void>;
  /** SIGKILL, data kept (PostgreSQL recovers from its WAL on the next start). */
  kill(): Promise<void>;
  /** Starts it again on the same port and data dir; resolves once it accepts connections. */
  start(): Promise<void>;
  running(): boolean;
}

/**
 * initdb in `dir` (TCP: password auth only; the socket in `dir` for the superuser `postgres`), start PostgreSQL on
 * a free loopback port, and create the role `temporal` with the password in `<dir>/postgres_password` by
 * deploy/native/postgres-role.sh, as the native recipe does on Debian's cluster. `dir`'s parent must be
 * traversable by the `postgres` user when running as root (os.tmpdir() is).
 */
export async function startPostgres(dir: string): Promise<Postgres> {
  const bin = postgresBinDir();
  const ids = await postgresIds();
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const dataDir = path.join(dir, 'pgdata');
  const passwordFile = path.join(dir, 'postgres_password');
  const logFile = path.join(dir, 'postgres.log');
  writeFileSync(passwordFile, `${randomBytes(24).toString('hex')}\n`, { mode: 0o600 });
  writeFileSync(logFile, '', { mode: 0o600 });
  if (ids) chownSync(dir, ids.uid, ids.gid);
  // The socket dir is `dir` (mode 0700, the server's user): only that user reaches the trusted local socket.
  const initdb = spawnLogged(path.join(bin, 'initdb'), ['-D', dataDir, '-U', 'postgres', '--auth-host=scram-sha-256', '--auth-local=trust',
    '--encoding=UTF8', '--no-locale'], logFile, { ids });
  const code = await new Promise<number | null>((resolve) => initdb.once('exit', (c) => resolve(c)));
  if (code !== 0) throw new Error(`initdb failed (${code}); its log: ${logFile}`);
  const port = await freePort();
  let child: ChildProcess | null = null;
  const running = (): boolean => child !== null && child.exitCode === null && child.signalCode === null;
  const start = async (): Promise<void> => {
    if (running()) return;
    // The socket lives in `dir` (never /var/run/postgresql); clients use TCP on 127.0.0.1 with the password.
    const p = spawnLogged(path.join(bin, 'postgres'), ['-D', dataDir, '-c', 'listen_addresses=127.0.0.1', '-c', `port=${port}`,
      '-c', `unix_socket_directories=${dir}`], logFile, { ids });
    child = p;
    await until(`PostgreSQL on 127.0.0.1:${port}`, async () => {
      try {
        await execFileP(path.join(bin, 'pg_isready'), ['-q', '-h', '127.0.0.1', '-p', String(port)]);
        return true;
      } catch {
        return false;
      }
    }, 60_000, { everyMs: 200, died: exitedEarly(p, 'PostgreSQL', logFile) });
  };
  await start();
  const role = spawnLogged(ROLE_SCRIPT, [], logFile, {
    env: { PATH: process.env['PATH'], PULSE_HOME: REPO_ROOT, POSTGRES_PWD_FILE: passwordFile, PSQL: `${path.join(bin, 'psql')} -h ${dir} -p ${port} -U postgres` },
  });
  const roleCode = await new Promise<number | null>((resolve) => role.once('exit', (c) => resolve(c)));
  if (roleCode !== 0) throw new Error(`postgres-role.sh failed (${roleCode}); its log: ${logFile}`);
  return {
    host: '127.0.0.1', port, user: DB_USER, passwordFile, dataDir, logFile, start, running,
    stop: async () => { if (child) await stopChild(child, 'SIGINT', 30_000); },
    kill: async () => { if (child) await stopChild(child, 'SIGKILL', 0); },
  };
}

/** The ports one cluster uses: the frontend's gRPC and HTTP, and each service's gRPC and membership port. */
export interface TemporalPorts {
  frontendGrpc: number;
  frontendHttp: number;
  frontendMembership: number;
  historyGrpc: number;
  historyMembership: number;
  matchingGrpc: number;
  matchingMembership: number;
  workerGrpc: number;
  workerMembership: number;
}

function listens(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/**
 * Nine distinct free loopback ports, all below 32768: Temporal stores membership ports in a PostgreSQL smallint
 * (cluster_membership.rpc_port), and the kernel's ephemeral range (where port 0 lands) starts at 32768.
 */
export async function allocatePorts(): Promise<TemporalPorts> {
  const seen = new Set<number>();
  const one = async (): Promise<number> => {
    for (;;) {
      const p = 10_000 + Math.floor(Math.random() * 22_000);
      if (!seen.has(p) && (await listens(p))) {
        seen.add(p);
        return p;
      }
    }
  };
  return {
    frontendGrpc: await one(), frontendHttp: await one(), frontendMembership: await one(),
    historyGrpc: await one(), historyMembership: await one(), matchingGrpc: await one(), matchingMembership: await one(),
    workerGrpc: await one(), workerMembership: await one(),
  };
}

/** The environment deploy/native/*.sh read (on top of deploy/native/temporal.env's defaults). */
export function nativeEnv(pg: Pick<Postgres, 'host' | 'port' | 'passwordFile'>, ports: TemporalPorts, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env['PATH'],
    HOME: process.env['HOME'],
    PULSE_HOME: REPO_ROOT,
    POSTGRES_SEEDS: pg.host,
    DB_PORT: String(pg.port),
    POSTGRES_PWD_FILE: pg.passwordFile,
    BIND_ON_IP: '127.0.0.1',
    FRONTEND_GRPC_PORT: String(ports.frontendGrpc),
    FRONTEND_HTTP_PORT: String(ports.frontendHttp),
    FRONTEND_MEMBERSHIP_PORT: String(ports.frontendMembership),
    HISTORY_GRPC_PORT: String(ports.historyGrpc),
    HISTORY_MEMBERSHIP_PORT: String(ports.historyMembership),
    MATCHING_GRPC_PORT: String(ports.matchingGrpc),
    MATCHING_MEMBERSHIP_PORT: String(ports.matchingMembership),
    WORKER_GRPC_PORT: String(ports.workerGrpc),
    WORKER_MEMBERSHIP_PORT: String(ports.workerMembership),
    TEMPORAL_ADDRESS: `127.0.0.1:${ports.frontendGrpc}`,
    ...extra,
  };
}

async function runScript(script: string, args: string[], env: NodeJS.ProcessEnv, logFile: string): Promise<void> {
  const child = spawnLogged(script, args, logFile, { env });
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  if (code !== 0) throw new Error(`${path.basename(script)} ${args.join(' ')} failed (${code}); its log: ${logFile}`);
}

/** Create and migrate both databases (deploy/native/temporal-setup.sh schema; idempotent). */
export function setupSchema(env: NodeJS.ProcessEnv, logFile: string): Promise<void> {
  return runScript(SETUP_SCRIPT, ['schema'], env, logFile);
}

/** Wait for the frontend, register $DEFAULT_NAMESPACE (env may name another) with the compose retention. */
export function registerNamespace(env: NodeJS.ProcessEnv, logFile: string): Promise<void> {
  return runScript(SETUP_SCRIPT, ['namespace'], env, logFile);
}

/** Resolves once the frontend at `address` answers GetSystemInfo (connection options: e.g. TLS). */
export async function waitForFrontend(address: string, timeoutMs = 120_000, connectOptions: Record<string, unknown> = {}, alive?: () => string | null): Promise<void> {
  await until(`the Temporal frontend at ${address}`, async () => {
    try {
      const conn = await Connection.connect({ address, connectTimeout: 2000, ...connectOptions });
      try {
        await conn.workflowService.getSystemInfo({});
        return true;
      } finally {
        await conn.close();
      }
    } catch {
      return false;
    }
  }, timeoutMs, { everyMs: 200, died: alive });
}

/**
 * Resolves once the frontend serves `namespace`: a namespace registered a moment ago is "not found" there until its
 * namespace cache refreshes (seconds), though DescribeNamespace (read from the database) already finds it.
 */
export async function waitForNamespace(address: string, namespace: string, connectOptions: Record<string, unknown> = {}, alive?: () => string | null): Promise<void> {
  const conn = await Connection.connect({ address, connectTimeout: 5000, ...connectOptions });
  try {
    await until(`namespace ${namespace} on ${address}`, async () => {
      try {
        await conn.workflowService.countWorkflowExecutions({ namespace });
        return true;
      } catch {
        return false;
      }
    }, 60_000, { everyMs: 200, died: alive });
  } finally {
    await conn.close();
  }
}

export interface TemporalProcess {
  /** The services this process runs ([] = all four). */
  services: string[];
  logFile: string;
  pid(): number | undefined;
  running(): boolean;
  /** SIGTERM (graceful), then SIGKILL after 20 s. Idempotent. */
  stop(): Promise<void>;
  kill(): Promise<void>;
  /** Starts it again with the same config (after stop or kill); does not wait for readiness. */
  start(): void;
}

/** Start deploy/native/temporal-server.sh [--service X ...] with `env` (nativeEnv); logs to `logFile`. */
export function startTemporalProcess(env: NodeJS.ProcessEnv, logFile: string, services: string[] = []): TemporalProcess {
  let child: ChildProcess | null = null;
  const running = (): boolean => child !== null && child.exitCode === null && child.signalCode === null;
  const start = (): void => {
    if (running()) return;
    child = spawnLogged(SERVER_SCRIPT, services.flatMap((s) => ['--service', s]), logFile, { env });
  };
  start();
  return {
    services, logFile, running, start,
    pid: () => child?.pid,
    stop: async () => { if (child) await stopChild(child, 'SIGTERM', 20_000); },
    kill: async () => { if (child) await stopChild(child, 'SIGKILL', 0); },
  };
}

export interface Cluster {
  /** The frontend, host:port. */
  address: string;
  namespace: string;
  /** The cluster's temp dir: logs (postgres.log, setup.log, temporal*.log), the PostgreSQL data and password file. */
  dir: string;
  pg: Postgres;
  ports: TemporalPorts;
  /** The environment the server processes run with (nativeEnv + opts.env). */
  env: NodeJS.ProcessEnv;
  processes: TemporalProcess[];
  /** Why the cluster is unusable (a server process exited), or null. */
  dead(): string | null;
  /** Resolves once the frontend answers again (after a restart). */
  ready(timeoutMs?: number): Promise<void>;
  /** Stops every process and removes the dir (kept when PULSE_KEEP_CLUSTER=1, for a look at the logs). */
  stop(): Promise<void>;
}

export interface ClusterOptions {
  /** Server processes, each a list of services (default one process with all four). */
  processes?: string[][];
  /** Extra server settings, e.g. NUM_HISTORY_SHARDS or TEMPORAL_TLS_* (deploy/native/temporal.yaml). */
  env?: Record<string, string>;
  /** The namespace to register (default: DEFAULT_NAMESPACE of deploy/native/temporal.env, "default"). */
  namespace?: string;
  /** Options for the readiness probe's Connection (e.g. tls). */
  connectOptions?: Record<string, unknown>;
}

/** PostgreSQL + schemas + the server process(es) + the namespace, all on loopback in a fresh temp dir. */
export async function startCluster(opts: ClusterOptions = {}): Promise<Cluster> {
  requireBuilt();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pulse-cluster-'));
  const setupLog = path.join(dir, 'setup.log');
  const processes: TemporalProcess[] = [];
  let pg: Postgres | null = null;
  let stopped = false;
  const stop = async (keep = process.env['PULSE_KEEP_CLUSTER'] === '1'): Promise<void> => {
    if (stopped) return;
    stopped = true;
    for (const p of [...processes].reverse()) await p.stop();
    await pg?.stop();
    if (!keep) rmSync(dir, { recursive: true, force: true });
  };
  try {
    pg = await startPostgres(dir);
    const ports = await allocatePorts();
    const namespace = opts.namespace ?? 'default';
    const env = nativeEnv(pg, ports, { ...(opts.namespace ? { DEFAULT_NAMESPACE: opts.namespace } : {}), ...opts.env });
    await setupSchema(env, setupLog);
    for (const services of opts.processes ?? [[]]) {
      const name = services.length ? services.join('-') : 'all';
      processes.push(startTemporalProcess(env, path.join(dir, `temporal-${name}.log`), services));
    }
    const address = `127.0.0.1:${ports.frontendGrpc}`;
    const dead = (): string | null => {
      const p = processes.find((x) => !x.running());
      return p ? `temporal-server (${p.services.join(',') || 'all services'}) is not running; its log: ${p.logFile}` : null;
    };
    const ready = (timeoutMs = 120_000): Promise<void> => waitForFrontend(address, timeoutMs, opts.connectOptions, dead);
    await ready();
    await registerNamespace(env, setupLog);
    await waitForNamespace(address, namespace, opts.connectOptions, dead);
    return { address, namespace, dir, pg, ports, env, processes, dead, ready, stop: () => stop() };
  } catch (err) {
    await stop(true); // keep the logs the error names
    throw err;
  }
}

export interface TemporalUi {
  /** http://127.0.0.1:<port>, the base PULSE_TEMPORAL_UI takes. */
  url: string;
  logFile: string;
  stop(): Promise<void>;
}

/**
 * The production Web UI (the built temporalio/ui server, deploy/native/temporal-ui.sh with the compose file's
 * settings) for a cluster, on a free loopback port; resolves once /healthz answers (the compose health check).
 */
export async function startTemporalUi(cluster: Pick<Cluster, 'address' | 'dir'>, env: Record<string, string> = {}): Promise<TemporalUi> {
  if (!existsSync(UI_BIN)) throw new Error(`${UI_BIN} is missing: run scripts/setup.sh (it builds the UI server once)`);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const logFile = path.join(cluster.dir, 'temporal-ui.log');
  const child = spawnLogged(UI_SCRIPT, [], logFile, {
    env: { PATH: process.env['PATH'], HOME: process.env['HOME'], PULSE_HOME: REPO_ROOT, TEMPORAL_ADDRESS: cluster.address, TEMPORAL_UI_PORT: String(port), TEMPORAL_CORS_ORIGINS: url, ...env },
  });
  const stop = () => stopChild(child, 'SIGTERM', 10_000);
  try {
    await until(`the Temporal UI at ${url}`, async () => (await fetch(`${url}/healthz`).catch(() => null))?.status === 200, 60_000, { everyMs: 200, died: exitedEarly(child, 'temporal-ui-server', logFile) });
  } catch (e) {
    await stop();
    throw e;
  }
  return { url, logFile, stop };
}
