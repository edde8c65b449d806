/**
 * Helpers for the end-to-end tier: run `node bin/pulse-cli` as a child, find free loopback ports for an embedded
 * Temporal server, and make throwaway state dirs that are removed (with their server) after the test.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Sim } from '../sim/index.js';
import { REPO_ROOT } from './paths.js';
import { freePortPair } from '../sim/ports.js';

export const CLI = path.join(REPO_ROOT, 'bin/pulse-cli');

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** A fresh state dir under the OS temp dir. */
export function tempDir(prefix = 'pulse-e2e-'): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), prefix));
}

/** Removes a temp dir, ignoring errors (cleanup must never mask the test's own failure). */
export async function removeDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true }).catch(() => undefined);
}

/** A CLI run that hangs is killed after this long, so a broken deploy fails the test instead of stalling the suite. */
const CLI_LIMIT_MS = 180_000;

/**
 * Starts the CLI; read its output with `output()`, its end with `done`. `group`: in a process group of its own, as a
 * shell runs a terminal's foreground job, so a test can signal the group (`process.kill(-pid, 'SIGHUP')`).
 */
export function startCli(args: string[], env: NodeJS.ProcessEnv, opts: { group?: boolean } = {}): { child: ChildProcess; done: Promise<CliResult>; output: () => string } {
  const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, NO_COLOR: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: opts.group === true });
  const limit = setTimeout(() => child.kill('SIGKILL'), CLI_LIMIT_MS);
  limit.unref();
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<CliResult>((resolve) => {
    child.once('close', (code, signal) => {
      clearTimeout(limit);
      resolve({ code, signal, stdout, stderr });
    });
  });
  return { child, done, output: () => stdout + stderr };
}

/** Runs the CLI to its end. */
export function runCli(args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  return startCli(args, env).done;
}

/** Resolves once the running CLI's output matches, or rejects when it exits first or the limit passes. */
export async function waitForOutput(run: ReturnType<typeof startCli>, re: RegExp, limitMs = 120_000): Promise<string> {
  const deadline = Date.now() + limitMs;
  let exited = false;
  void run.done.then(() => (exited = true));
  while (!re.test(run.output())) {
    if (exited || Date.now() > deadline) throw new Error(`output never matched ${re}:\n${run.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return run.output();
}

/**
 * The embedded server and its background worker are detached on purpose (they outlive the CLI), so a test process
 * that exits before its after() hook (a timeout, an uncaught error) would leave them running: kill both on exit too.
 */
export function killEmbeddedServerOnExit(stateDir: string): void {
  process.once('exit', () => {
    for (const f of ['worker.json', 'server.json']) {
      try {
        const { pid } = JSON.parse(readFileSync(path.join(stateDir, 'temporal', f), 'utf8')) as { pid: number };
        process.kill(pid, 'SIGKILL');
      } catch {
        // none, or already gone
      }
    }
  });
}

/** The pid of the background worker recorded beside the embedded server (cli/deploy-client/background-worker.ts), or null. */
export function backgroundWorkerPid(stateDir: string): number | null {
  try {
    return (JSON.parse(readFileSync(path.join(stateDir, 'temporal', 'worker.json'), 'utf8')) as { pid: number }).pid;
  } catch {
    return null;
  }
}

/**
 * The CLI environment of a run against the simulator: its nodes.json (no protected node), the state dir
 * `<dir>/state`, and an embedded dev server on ports of its own (TEMPORAL_ADDRESS empty: never a user's server).
 */
export async function simCliEnv(sim: Sim, dir: string): Promise<NodeJS.ProcessEnv> {
  const nodes = path.join(dir, 'nodes.json');
  sim.writeNodesJson(nodes, { protected: [] });
  return {
    ...sim.env(),
    PULSE_NODES: nodes,
    PULSE_STATE_DIR: path.join(dir, 'state'),
    PULSE_TEMPORAL_PORT: String(await freePortPair()),
    TEMPORAL_ADDRESS: '',
  };
}

