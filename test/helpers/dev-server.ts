/**
 * A real `temporal server start-dev` for tests: pinned binary from .tools/bin (never a download), SQLite in a temp
 * dir, free loopback ports, the pulse search attributes registered, killed on teardown (and on process exit, so a
 * failed test never leaves a server behind).
 *
 *   const server = await startDevServer();
 *   try { ... server.address ... } finally { await server.stop(); }
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { dynamicConfigArgs } from '../../cli/deploy-client/embedded-server.js';
import { REPO_ROOT } from './paths.js';
import { freePort } from '../sim/ports.js';

export const TEMPORAL_BIN = path.join(REPO_ROOT, '.tools', 'bin', 'temporal');
export const TEST_SERVER_BIN = path.join(REPO_ROOT, '.tools', 'bin', 'temporal-test-server');

export interface DevServer {
  /** host:port of the frontend gRPC service. */
  address: string;
  namespace: string;
  /** The Web UI (http://127.0.0.1:<port>) when started with ui: true, else null. */
  uiUrl: string | null;
  dbFile: string;
  process: ChildProcess;
  /** stdout+stderr of the server so far (for failure messages). */
  log(): string;
  /** SIGTERM, then SIGKILL after 5 s; removes the temp dir unless dbFile was given. Idempotent. */
  stop(): Promise<void>;
}

export interface DevServerOptions {
  /** Keep the DB here (reuse across restarts); default a fresh temp dir removed on stop. */
  dbFile?: string;
  /** Serve the Web UI on a free port (default headless). */
  ui?: boolean;
  /** Extra search attributes NAME → type, besides PulseNode/PulseProfile/PulseAction/PulseOutcome (Keyword). */
  searchAttributes?: Record<string, string>;
  /** How long to wait for the frontend to answer (default 60 s: a loaded 2-core machine is slow). */
  readyTimeoutMs?: number;
  /** Dynamic config laid over pulse's own (SERVER_DYNAMIC_CONFIG): a server set up as an operator's may be. */
  dynamicConfig?: Record<string, boolean | number>;
}

const live = new Set<ChildProcess>();
process.on('exit', () => {
  for (const p of live) p.kill('SIGKILL');
});

/** Start a dev server and resolve once its frontend answers GetSystemInfo. */
export async function startDevServer(opts: DevServerOptions = {}): Promise<DevServer> {
  const tmp = opts.dbFile ? null : mkdtempSync(path.join(os.tmpdir(), 'pulse-temporal-'));
  const dbFile = opts.dbFile ?? path.join(tmp as string, 'temporal.db');
  const port = await freePort();
  const uiPort = opts.ui ? await freePort() : null;
  const attrs = { PulseNode: 'Keyword', PulseProfile: 'Keyword', PulseAction: 'Keyword', PulseOutcome: 'Keyword', ...opts.searchAttributes };
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(port), '--db-filename', dbFile, '--log-level', 'error',
    ...dynamicConfigArgs(opts.dynamicConfig),
    ...Object.entries(attrs).flatMap(([k, v]) => ['--search-attribute', `${k}=${v}`]),
    ...(uiPort ? ['--ui-port', String(uiPort)] : ['--headless'])];
  const child = spawn(TEMPORAL_BIN, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-20000)));
  child.stderr?.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-20000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(t);
    }
    live.delete(child);
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  };
  const address = `127.0.0.1:${port}`;
  try {
    await waitReady(address, child, opts.readyTimeoutMs ?? 60_000, () => output);
  } catch (err) {
    await stop();
    throw err;
  }
  return { address, namespace: 'default', uiUrl: uiPort ? `http://127.0.0.1:${uiPort}` : null, dbFile, process: child, log: () => output, stop };
}

async function waitReady(address: string, child: ChildProcess, timeoutMs: number, log: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`temporal start-dev exited early:\n${log()}`);
    try {
      const conn = await Connection.connect({ address, connectTimeout: 1000 });
      try {
        await conn.workflowService.getSystemInfo({});
        return;
      } finally {
        await conn.close();
      }
    } catch {
      if (Date.now() > deadline) throw new Error(`temporal start-dev at ${address} not ready after ${timeoutMs} ms:\n${log()}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}
