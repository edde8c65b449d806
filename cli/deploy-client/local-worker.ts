/**
 * The worker that `up`/`down`/`watch` provide when no worker polls the task queues, so a deploy never waits for a
 * worker nobody started. Beside the embedded server: a background `pulse worker` (background.ts) that outlives
 * this terminal, so Ctrl-C, `--detach` and a closed terminal never pause a deploy. Beside a configured server (whose
 * workers an operator runs as a service, docs/PRODUCTION.md): a worker in this process, as a stopgap that says so;
 * a deploy it leaves is resumed by the next pulse invocation or `pulse worker`, since Temporal keeps its history.
 */
import { GATEWAY_TASK_QUEUE, TASK_QUEUE } from '../../workflows/definitions.js';
import { stateDir, workerConnectOptions, type PulseTemporal } from './temporal.js';
import { openDeploys, queuesServed } from './presence.js';

/** The worker this CLI provided: one in its own process, or the background worker beside the embedded server. */
export interface LocalWorker {
  /** The background worker's pid; null for the worker in this process. */
  background: number | null;
  /** Still there (the background worker's process runs). */
  alive(): boolean;
  /** In this process: graceful stop (in-flight activities are cancelled; the deploy continues on the next worker). Background: nothing. */
  stop(): Promise<void>;
}

/** What the in-process worker needs beyond the connection: the command's --nodes and --verbose. */
export interface LocalWorkerOptions {
  /** The command's --nodes: the worker checks every plan against it. */
  nodes?: string | undefined;
  /** --verbose: the worker's and the SDK's log lines also on stderr (they always go to the worker log). */
  verbose?: boolean;
}

/**
 * Starts a worker in this process when no live worker polls (and, unless the caller knows one is open, a deploy
 * is open: visibility lags a just-started workflow, so a follower passes knownOpen); says so on `say`.
 * Returns null when another worker serves the queue.
 */
export async function ensureWorker(t: PulseTemporal, say: (line: string) => void, knownOpen = false, opts: LocalWorkerOptions = {}): Promise<LocalWorker | null> {
  const served = await queuesServed(t);
  if (served.deploy && served.gateway) return null;
  if (!knownOpen && (await openDeploys(t)) === 0) return null;
  const missing = [served.deploy ? null : TASK_QUEUE, served.gateway ? null : GATEWAY_TASK_QUEUE].filter(Boolean).join(' and ');
  if (t.target.embedded) {
    const { ensureBackgroundWorker } = await import('./background.js');
    const bg = await ensureBackgroundWorker(t, { nodes: opts.nodes, gateway: !served.gateway });
    if ('pid' in bg) {
      // One sentence: who runs the deploy, that closing the terminal does not stop it, and where its log is.
      say(`${bg.reused ? 'The' : 'Started a'} background pulse worker (pid ${bg.pid}, log ${bg.logFile}) ${bg.reused ? 'runs' : 'to run'} this deploy; it goes on if this terminal closes and exits after ${bg.idleS} s idle.`);
      const { pidAlive } = await import('../../runtime/state/pid.js');
      return { background: bg.pid, alive: () => pidAlive(bg.pid), stop: async () => undefined };
    }
    say(`could not start a background pulse worker (${bg.failed}): running one in this process instead; Ctrl-C then pauses the deploy`);
  }
  const { createPulseWorker } = await import('../../worker/main.js');
  const { withoutGatewayNotice, workerLogger } = await import('../../worker/logging.js');
  const { NativeConnection, Runtime } = await import('@temporalio/worker');
  const { fileLogger, openWorkerLog } = await import('./worker-log.js');
  // The SDK's lines (e.g. "Activity failed" with a stack on every failed step) and the worker's own go to the worker
  // log, never between pulse's lines; --verbose copies them to stderr. No SDK signal handlers: the follower owns Ctrl-C.
  const sdkLogger = fileLogger(openWorkerLog(), opts.verbose ? process.stderr : null);
  try {
    Runtime.install({ logger: withoutGatewayNotice(sdkLogger, GATEWAY_TASK_QUEUE), shutdownSignals: [] });
  } catch {
    // already installed in this process
  }
  const connection = await NativeConnection.connect(workerConnectOptions(t.target));
  const logger = workerLogger(sdkLogger);
  // The gateway queue only when nobody serves it: state writes belong to the gateway host when one runs a worker.
  const { resolveNodesPath } = await import('../../runtime/state/paths.js');
  // The same nodes.json as this command (--nodes / PULSE_NODES): the worker checks every plan against it.
  const nodesPath = resolveNodesPath(opts.nodes);
  const worker = await createPulseWorker({ connection, namespace: t.target.namespace, taskQueue: TASK_QUEUE, stateDir: stateDir(), nodesPath, logger, gateway: !served.gateway });
  say(`no pulse worker polls task queue ${missing}: running one in this process until the deploy ends`);
  const running = worker.run();
  running.catch(() => undefined); // its failure surfaces in stop()
  return {
    background: null,
    alive: () => true,
    async stop() {
      worker.shutdown();
      try {
        await running;
      } finally {
        await connection.close();
      }
    },
  };
}

const WORKER_CHECK_MS = 15_000;

/**
 * Keeps a worker for a followed deploy: checks now and every WORKER_CHECK_MS whether a live worker polls, and runs
 * one in this process when none does (e.g. the `pulse worker` serving the deploy died while we follow it).
 */
export class WorkerKeeper {
  local: LocalWorker | null = null;
  private timer: NodeJS.Timeout | null = null;
  private checking = false;

  constructor(private readonly t: PulseTemporal, private readonly say: (l: string) => void, private readonly opts: LocalWorkerOptions = {}) {}

  async start(): Promise<void> {
    await this.check();
    this.timer = setInterval(() => void this.check().catch(() => undefined), WORKER_CHECK_MS);
  }

  private async check(): Promise<void> {
    if (this.local && !this.local.alive()) this.local = null; // the background worker died: provide another
    if (this.local || this.checking) return;
    this.checking = true;
    try {
      this.local = await ensureWorker(this.t, this.say, true, this.opts);
    } finally {
      this.checking = false;
    }
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    while (this.checking) await new Promise((r) => setTimeout(r, 50));
    await this.local?.stop();
  }
}
