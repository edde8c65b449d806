/**
 * The whole stack for the fault, security and benchmark tiers: a real `temporal server start-dev` (SQLite file
 * in the stack dir, so a restart keeps it), simulated sshd nodes, and `pulse worker` as a separate process (so it
 * can be SIGKILLed). Deploys start straight through the Temporal client with plans from the production plan
 * builder (the CLI's own path), and `stop()` ends every process and removes every file it made.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync, type WriteStream } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection, WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { loadNodesConfig, loadProfiles } from '../../runtime/config/index.js';
import { buildDownPlan, buildUpPlan } from '../../runtime/plan/plan.js';
import { upStart } from '../../runtime/plan/plan-check.js';
import { queuePollers } from '../../runtime/pollers.js';
import { DOWN_WORKFLOW, SA_ACTION, SA_NODE, SA_PROFILE, TASK_QUEUE, UP_WORKFLOW, workflowIdFor } from '../../workflows/definitions.js';
import type { DeployResult, DownPlan, UpPlan } from '../../runtime/model/index.js';
import { CLI, removeDir, tempDir } from './cli.js';
import { TEMPORAL_BIN, startDevServer, type DevServer } from './dev-server.js';
import { freePort } from '../sim/ports.js';
import { startSim, type Sim, type SimOptions } from '../sim/index.js';
import { ensureSearchAttributes } from '../../cli/deploy-client/temporal.js';
import { dynamicConfigArgs } from '../../cli/deploy-client/embedded-server.js';
import { startCluster } from './cluster.js';

export interface StackOptions {
  nodes: number | string[];
  readyDelayMs?: number;
  memory?: SimOptions['memory'];
  /** Nodes that get protected: true (default none). */
  protected?: string[];
  /** Start one worker right away (default true). */
  worker?: boolean;
  /** Extra `temporal server start-dev` arguments (e.g. --dynamic-config-value ...). */
  serverArgs?: string[];
  /** 'cluster': the production-shaped server of test/helpers/cluster.ts (PostgreSQL) instead of the dev server. */
  server?: 'dev' | 'cluster';
}

/** What the stack needs of its server: the dev server, or a cluster (no restartServer then). */
export type StackServer = Pick<DevServer, 'address' | 'stop'> & { dbFile: string | null };

export interface WorkerProc {
  child: ChildProcess;
  pid: number;
  /** Everything the worker wrote (stdout+stderr), also kept in its log file. */
  log(): string;
  exited: Promise<void>;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** The end of one deploy as the fault table counts it. */
export interface Outcome {
  status: 'succeeded' | 'failed-compensated' | 'failed-untouched' | 'failed-uncompensated' | 'refused';
  result: DeployResult | null;
  error: string | null;
}

export class Stack {
  readonly workers: WorkerProc[] = [];
  private workerCount = 0;
  private readonly logs: WriteStream[] = [];

  constructor(
    readonly dir: string,
    public server: StackServer,
    readonly sim: Sim,
    public connection: Connection,
    public client: Client,
    readonly env: Record<string, string>,
  ) {}

  get nodesFile(): string {
    return this.env['PULSE_NODES'] ?? '';
  }

  get stateDir(): string {
    return this.env['PULSE_STATE_DIR'] ?? '';
  }

  /** `pulse worker` as a child process; resolves once the server lists it as a poller of the task queue. */
  async startWorker(extraEnv: Record<string, string> = {}, opts: { umask?: string } = {}): Promise<WorkerProc> {
    const n = ++this.workerCount;
    const logFile = path.join(this.dir, 'logs', `worker-${n}.log`);
    mkdirSync(path.dirname(logFile), { recursive: true });
    const out = createWriteStream(logFile);
    this.logs.push(out);
    const env = { ...process.env, ...this.env, ...extraEnv };
    // With a umask, sh sets it and execs node in place (same pid, so SIGKILL and the poller identity still match).
    const child = opts.umask
      ? spawn('/bin/sh', ['-c', `umask ${opts.umask}; exec "$0" "$@"`, process.execPath, CLI, 'worker'], { env, stdio: ['ignore', 'pipe', 'pipe'] })
      : spawn(process.execPath, [CLI, 'worker'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    const onData = (d: Buffer): void => {
      text = (text + d.toString()).slice(-200_000);
      out.write(d);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const w: WorkerProc = {
      child,
      pid: child.pid ?? -1,
      log: () => text,
      exited,
      kill: async (signal = 'SIGKILL') => {
        if (child.exitCode === null && child.signalCode === null) child.kill(signal);
        await exited;
      },
    };
    this.workers.push(w);
    await this.waitForPoller(w);
    return w;
  }

  private async waitForPoller(w: WorkerProc): Promise<void> {
    const deadline = Date.now() + 60_000;
    const me = `${w.pid}@${os.hostname()}`;
    for (;;) {
      if (w.child.exitCode !== null || w.child.signalCode !== null) throw new Error(`pulse worker exited early:\n${w.log()}`);
      if ((await queuePollers(this.client.workflowService, 'default', TASK_QUEUE, 'workflow')).some((p) => p.identity === me)) return;
      if (Date.now() > deadline) throw new Error(`pulse worker ${me} never polled:\n${w.log()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** The plan of `pulse model up <profile> --node <node>` (the CLI's own builder). */
  planUp(node: string, profile = 'best', opts: Partial<{ yes: boolean; restart: boolean; timeoutS: number }> = {}): UpPlan {
    const config = loadNodesConfig(this.nodesFile);
    return buildUpPlan(config, loadProfiles(), { profile, node, overlay: null, overlayWins: false, yes: opts.yes ?? false, restart: opts.restart ?? false, timeoutS: opts.timeoutS }, new Date());
  }

  planDown(node: string, yes = false): DownPlan {
    return buildDownPlan(loadNodesConfig(this.nodesFile), { node, yes }, new Date());
  }

  /**
   * Start the workflow of a plan under the node lock, like `pulse model up/down --detach`. The input is the whole
   * plan (what the fault and security tiers forge fields of); `as: 'cli'` starts an up with the UpStart the CLI sends
   * (runtime/plan/plan-check.ts upStart: the benchmarks measure what a user's deploy records).
   */
  async start(plan: UpPlan | DownPlan, opts: { as?: 'plan' | 'cli' } = {}): Promise<WorkflowHandle> {
    return this.client.workflow.start(plan.action === 'up' ? UP_WORKFLOW : DOWN_WORKFLOW, {
      taskQueue: TASK_QUEUE,
      workflowId: workflowIdFor(plan.node),
      args: [opts.as === 'cli' && plan.action === 'up' ? upStart(plan) : plan],
      workflowIdConflictPolicy: 'FAIL',
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      typedSearchAttributes: [
        { key: SA_NODE, value: plan.node },
        { key: SA_ACTION, value: plan.action },
        ...(plan.action === 'up' ? [{ key: SA_PROFILE, value: plan.profile }] : []),
      ],
    });
  }

  /** Wait for a deploy's end and classify it. */
  async outcome(handle: WorkflowHandle): Promise<Outcome> {
    try {
      const result = (await handle.result()) as DeployResult;
      return { status: result.ok ? 'succeeded' : 'failed-uncompensated', result, error: null };
    } catch (e) {
      if (!(e instanceof WorkflowFailedError)) throw e;
      const details = (e.cause as { details?: unknown[] } | undefined)?.details;
      const result = (Array.isArray(details) ? details[0] : null) as DeployResult | null;
      const error = e.cause?.message ?? e.message;
      const type = result?.errorType ?? (e.cause as { type?: string } | undefined)?.type;
      if (type === 'Refused' && !result?.compensated) return { status: 'refused', result, error };
      if (result?.compensated) return { status: 'failed-compensated', result, error };
      return { status: result && result.state !== 'failed' ? 'failed-untouched' : 'failed-uncompensated', result, error };
    }
  }

  /**
   * The full history of a workflow as searchable text: the history JSON (as `temporal workflow show --output json`
   * exports it) plus every payload decoded from its bytes, so a secret inside an input, result, heartbeat or
   * failure is found in plain text.
   */
  async historyText(workflowId: string, runId?: string): Promise<string> {
    const h = await this.client.workflow.getHandle(workflowId, runId).fetchHistory();
    return `${historyToJSON(h)}\n${decodedStrings(h).join('\n')}`;
  }

  /** Every workflow the server knows (all nodes, all runs). */
  async allRuns(): Promise<{ workflowId: string; runId: string }[]> {
    const out: { workflowId: string; runId: string }[] = [];
    for await (const w of this.client.workflow.list()) out.push({ workflowId: w.workflowId, runId: w.runId });
    return out;
  }

  /** Every file under the state dir (relative path → text). */
  async stateFiles(): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    const walk = async (d: string): Promise<void> => {
      for (const e of await readdir(d, { withFileTypes: true }).catch(() => [])) {
        const p = path.join(d, e.name);
        if (e.isDirectory()) {
          if (e.name !== 'temporal') await walk(p);
        } else out.set(path.relative(this.stateDir, p), await readFile(p, 'utf8').catch(() => ''));
      }
    };
    await walk(this.stateDir);
    return out;
  }

  /**
   * Stop the Temporal dev server (SIGTERM, like a service restart) and start it again on the same port with the
   * same SQLite file, after `downMs`. Workers and clients keep their address and must reconnect by themselves.
   */
  async restartServer(downMs = 2000): Promise<void> {
    const { dbFile, address } = this.server;
    if (dbFile === null) throw new Error('restartServer: only for the dev server (a cluster restarts its own processes)');
    await this.server.stop();
    await new Promise((r) => setTimeout(r, downMs));
    this.server = await startDevServerOn(Number(address.split(':')[1]), dbFile);
  }

  async stop(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.kill('SIGKILL')));
    for (const l of this.logs) l.end();
    await this.connection.close().catch(() => undefined);
    await this.server.stop().catch(() => undefined);
    await this.sim.stop().catch(() => undefined);
    await removeDir(this.dir);
  }
}

/** `temporal server start-dev` on a given port and SQLite file (the helper picks a free port; a restart keeps it). */
export async function startDevServerOn(port: number, dbFile: string, extra: string[] = []): Promise<DevServer> {
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(port), '--db-filename', dbFile, '--log-level', 'error', '--headless',
    ...dynamicConfigArgs(), ...extra,
    ...['PulseNode', 'PulseProfile', 'PulseAction', 'PulseOutcome'].flatMap((k) => ['--search-attribute', `${k}=Keyword`])];
  const child = spawn(TEMPORAL_BIN, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-20000)));
  child.stderr?.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-20000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const onExit = (): void => void child.kill('SIGKILL');
  process.once('exit', onExit);
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(t);
    }
    process.off('exit', onExit);
  };
  const address = `127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`temporal start-dev exited on restart:\n${output}`);
    try {
      const conn = await Connection.connect({ address, connectTimeout: 1000 });
      await conn.workflowService.getSystemInfo({});
      await conn.close();
      break;
    } catch {
      if (Date.now() > deadline) {
        await stop();
        throw new Error(`temporal start-dev on ${address} not ready after a restart:\n${output}`);
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  return { address, namespace: 'default', uiUrl: null, dbFile, process: child, log: () => output, stop };
}

/** Every string and every byte array (decoded as UTF-8) inside `v`. */
export function decodedStrings(v: unknown, out: string[] = []): string[] {
  if (typeof v === 'string') out.push(v);
  else if (v instanceof Uint8Array) out.push(Buffer.from(v).toString('utf8'));
  else if (Array.isArray(v)) for (const x of v) decodedStrings(x, out);
  else if (v !== null && typeof v === 'object') for (const x of Object.values(v)) decodedStrings(x, out);
  return out;
}

/** Bring up the server, the sim nodes and (by default) one worker. */
export async function startStack(opts: StackOptions): Promise<Stack> {
  const dir = await tempDir('pulse-stack-');
  let server: StackServer | null = null;
  let sim: Sim | null = null;
  try {
    mkdirSync(path.join(dir, 'temporal'), { recursive: true });
    [server, sim] = await Promise.all([
      opts.server === 'cluster'
        ? startCluster().then((c) => ({ address: c.address, stop: c.stop, dbFile: null }))
        : opts.serverArgs
          ? freePort().then((p) => startDevServerOn(p, path.join(dir, 'temporal', 'temporal.db'), opts.serverArgs))
          : startDevServer({ dbFile: path.join(dir, 'temporal', 'temporal.db') }),
      startSim({ nodes: opts.nodes, readyDelayMs: opts.readyDelayMs ?? 300, ...(opts.memory ? { memory: opts.memory } : {}) }),
    ]);
    const nodesFile = path.join(dir, 'nodes.json');
    sim.writeNodesJson(nodesFile, { protected: opts.protected ?? [] });
    const env = { ...sim.env(), PULSE_NODES: nodesFile, PULSE_STATE_DIR: path.join(dir, 'state'), TEMPORAL_ADDRESS: server.address, NO_COLOR: '1' };
    const connection = await Connection.connect({ address: server.address });
    // The dev server starts with pulse's search attributes; a cluster gets them as pulse registers them.
    if (opts.server === 'cluster') await ensureSearchAttributes(connection, 'default');
    const stack = new Stack(dir, server, sim, connection, new Client({ connection }), env);
    if (opts.worker !== false) await stack.startWorker().catch(async (e) => {
      await stack.stop();
      throw e;
    });
    return stack;
  } catch (e) {
    await server?.stop().catch(() => undefined);
    await sim?.stop().catch(() => undefined);
    await removeDir(dir);
    throw e;
  }
}

/** The node's .env as it is on disk now. */
export function nodeEnv(sim: Sim, node: string): string {
  return readFileSync(sim.node(node).envPath, 'utf8');
}
