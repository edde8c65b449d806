/**
 * `pulse worker` as a child process (the real CLI, as an operator runs it), with stdout and stderr kept apart:
 * stderr (where the worker logs) is a pipe, not a TTY, so its log lines are JSON. Killed on teardown and on exit.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import os from 'node:os';
import type { Client } from '@temporalio/client';
import { queuePollers, type QueueType } from '../../runtime/pollers.js';
import { TASK_QUEUE } from '../../workflows/definitions.js';
import { CLI } from '../helpers/cli.js';

export interface WorkerProc {
  child: ChildProcess;
  pid: number;
  stdout(): string;
  stderr(): string;
  /** stderr's complete JSON log lines, parsed (a line that is not JSON throws, naming it). */
  lines(): Record<string, unknown>[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

const live = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of live) c.kill('SIGKILL');
});

/** Parse each non-empty line of `text` as one JSON object. */
export function jsonLines(text: string): Record<string, unknown>[] {
  return text.split('\n').filter((l) => l.trim() !== '').map((l) => {
    try {
      return JSON.parse(l) as Record<string, unknown>;
    } catch {
      throw new Error(`not a JSON log line: ${l}`);
    }
  });
}

/** Start `pulse worker ...args` with `env` added to this process's environment. */
export function spawnWorker(args: string[], env: Record<string, string>): WorkerProc {
  const child = spawn(process.execPath, [CLI, 'worker', ...args], { env: { ...process.env, PULSE_LOG_LEVEL: 'INFO', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);
  let out = '';
  let err = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      live.delete(child);
      resolve({ code, signal });
    }),
  );
  return {
    child,
    pid: child.pid ?? -1,
    stdout: () => out,
    stderr: () => err,
    lines: () => jsonLines(err.slice(0, err.lastIndexOf('\n') + 1)), // a line still being written is left out
    exited,
    async kill(signal: NodeJS.Signals = 'SIGKILL') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}

/**
 * Resolve once the server lists `w` among the pollers of each queue: its activity pollers (both queues have them) and,
 * on the deploy queue, its workflow pollers too. The CLI asks for a workflow poller there before it trusts a worker
 * to run the deploy (cli/deploy-client/presence.ts); on a loaded machine the workflow poller (the bundle's thread)
 * comes up seconds after the activity one, and a check of activities only let the CLI start its own worker.
 */
export async function waitForPolls(client: Client, w: WorkerProc, queues: string[], timeoutMs = 60_000): Promise<void> {
  const me = `${w.pid}@${os.hostname()}`;
  const deadline = Date.now() + timeoutMs;
  const wanted = queues.flatMap((name) => (name === TASK_QUEUE ? [[name, 'workflow'], [name, 'activity']] : [[name, 'activity']]) as [string, QueueType][]);
  for (const [name, type] of wanted) {
    for (;;) {
      if (w.child.exitCode !== null || w.child.signalCode !== null) throw new Error(`pulse worker exited early:\n${w.stdout()}${w.stderr()}`);
      if ((await queuePollers(client.workflowService, 'default', name, type)).some((p) => p.identity === me)) break;
      if (Date.now() > deadline) throw new Error(`pulse worker ${me} never polled ${name} (${type === 'workflow' ? 'workflows' : 'activities'}):\n${w.stdout()}${w.stderr()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

