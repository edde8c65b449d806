/**
 * `pulse worker` (the long-running worker), and the in-process worker that `up`/`down`/`watch` run when no worker
 * polls the task queue, so a deploy never waits for a worker nobody started. A crashed CLI's deploy is then resumed
 * by the next pulse invocation (or `pulse worker`), since Temporal keeps its history.
 */
import os from 'node:os';
import type { WorkerOptions } from '../options.js';
import { PulseError } from '../../runtime/errors.js';
import { connectTemporal, stateDir, workerConnectOptions, type PulseTemporal } from '../temporal.js';
import { GATEWAY_TASK_QUEUE, TASK_QUEUE } from '../../workflows/definitions.js';
import { pidAlive } from '../../runtime/pid.js';

/** A worker running inside this CLI process. */
export interface LocalWorker {
  /** Graceful stop: in-flight activities are cancelled; the deploy continues on the next worker. */
  stop(): Promise<void>;
}

interface PollerLike {
  identity?: string | null;
  lastAccessTime?: { seconds?: number | { toNumber(): number } | null } | null;
}

const REMOTE_POLLER_FRESH_S = 90; // a live worker re-polls within the server's ~70 s long-poll timeout


/**
 * Whether a poller the server remembers is still alive. The server keeps pollers listed for minutes after they
 * die, so a worker on this host (SDK identity `<pid>@<host>`) is checked by pid; others by their last poll time.
 */
export function pollerAlive(p: PollerLike, nowMs = Date.now(), host = os.hostname()): boolean {
  const m = /^(\d+)@(.+)$/.exec(p.identity ?? '');
  if (m && m[2] === host) return pidAlive(Number(m[1]));
  const s = p.lastAccessTime?.seconds;
  const sec = s && typeof s === 'object' ? s.toNumber() : Number(s ?? 0);
  return nowMs / 1000 - sec < REMOTE_POLLER_FRESH_S;
}

async function livePoller(t: PulseTemporal, name: string, type: 1 | 2): Promise<boolean> {
  const res = await t.client.workflowService.describeTaskQueue({
    namespace: t.target.namespace,
    taskQueue: { name, kind: 1 }, // TASK_QUEUE_KIND_NORMAL
    taskQueueType: type, // 1 WORKFLOW, 2 ACTIVITY
  });
  return (res.pollers ?? []).some((p) => pollerAlive(p as PollerLike));
}

/** Which pulse queues a live worker polls: the deploy queue (workflows) and the gateway queue (state activities). */
export async function queuesServed(t: PulseTemporal): Promise<{ deploy: boolean; gateway: boolean }> {
  const [deploy, gateway] = await Promise.all([livePoller(t, TASK_QUEUE, 1), livePoller(t, GATEWAY_TASK_QUEUE, 2)]);
  return { deploy, gateway };
}

/** True when live workers poll both pulse queues (a deploy can run to its end without this process). */
export async function workerPolls(t: PulseTemporal): Promise<boolean> {
  const q = await queuesServed(t);
  return q.deploy && q.gateway;
}

/** Number of unfinished pulse deploys (any node, but `except`: visibility may still show a just-closed one). */
export async function openDeploys(t: PulseTemporal, except?: string): Promise<number> {
  const not = except ? ` AND WorkflowId != '${except.replace(/'/g, '')}'` : '';
  const r = await t.client.workflow.count(`TaskQueue = '${TASK_QUEUE}' AND ExecutionStatus = 'Running'${not}`);
  return r.count;
}

/**
 * Starts a worker in this process when no live worker polls (and, unless the caller knows one is open, a deploy
 * is open: visibility lags a just-started workflow, so a follower passes knownOpen); says so on `say`.
 * Returns null when another worker serves the queue.
 */
export async function ensureWorker(t: PulseTemporal, say: (line: string) => void, knownOpen = false, nodes?: string): Promise<LocalWorker | null> {
  const served = await queuesServed(t);
  if (served.deploy && served.gateway) return null;
  if (!knownOpen && (await openDeploys(t)) === 0) return null;
  const { createPulseWorker } = await import('../../worker/main.js');
  const { withoutGatewayNotice } = await import('../../worker/logging.js');
  const { NativeConnection, Runtime, DefaultLogger } = await import('@temporalio/worker');
  try {
    // Only warnings from the SDK in a CLI's output; no SDK signal handlers: followDeploy owns Ctrl-C.
    Runtime.install({ logger: withoutGatewayNotice(new DefaultLogger('WARN'), GATEWAY_TASK_QUEUE), shutdownSignals: [] });
  } catch {
    // already installed in this process
  }
  const connection = await NativeConnection.connect(workerConnectOptions(t.target));
  const logger = { info() {}, warn: (m: string) => say(`worker: ${m}`) };
  // The gateway queue only when nobody serves it: state writes belong to the gateway host when one runs a worker.
  const { resolveNodesPath } = await import('../../runtime/paths.js');
  // The same nodes.json as this command (--nodes / PULSE_NODES): the worker checks every plan against it.
  const nodesPath = resolveNodesPath(nodes);
  const worker = await createPulseWorker({ connection, namespace: t.target.namespace, taskQueue: TASK_QUEUE, stateDir: stateDir(), nodesPath, logger, gateway: !served.gateway });
  const missing = [served.deploy ? null : TASK_QUEUE, served.gateway ? null : GATEWAY_TASK_QUEUE].filter(Boolean).join(' and ');
  say(`no pulse worker polls task queue ${missing}: running one in this process until the deploy ends`);
  const running = worker.run();
  running.catch(() => undefined); // its failure surfaces in stop()
  return {
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

/** `pulse worker` options beyond the shared ones. */
export interface WorkerRunOptions extends WorkerOptions {
  /** false: `--no-gateway` (or PULSE_WORKER_GATEWAY=0), poll only the deploy queue (a host without the gateway file). */
  gateway?: boolean;
  /** `--metrics HOST:PORT`, else $PULSE_METRICS_ADDRESS; unset: no metrics endpoint. */
  metrics?: string | undefined;
}

export async function run(opts: WorkerRunOptions): Promise<number> {
  const metricsAddress = opts.metrics ?? (process.env['PULSE_METRICS_ADDRESS'] || undefined);
  const { runWorker } = await import('../../worker/main.js');
  if (metricsAddress) {
    const { parseHostPort } = await import('../../worker/metrics.js');
    parseHostPort(metricsAddress, opts.metrics ? '--metrics' : 'PULSE_METRICS_ADDRESS'); // usage error before connecting
  }
  const { resolveNodesPath } = await import('../../runtime/paths.js');
  const t = await connectTemporal(opts);
  try {
    await runWorker({
      nodesPath: resolveNodesPath(opts.nodes),
      ...workerConnectOptions(t.target),
      namespace: t.target.namespace,
      taskQueue: opts.taskQueue ?? TASK_QUEUE,
      gateway: opts.gateway !== false && !/^(0|false|no)$/i.test(process.env['PULSE_WORKER_GATEWAY'] ?? ''),
      ...(metricsAddress ? { metricsAddress } : {}),
    });
  } catch (e) {
    if (e instanceof PulseError) throw e;
    throw new PulseError('temporal', `the worker stopped: ${(e as Error).message}`, { cause: e });
  } finally {
    await t.close();
  }
  return 0;
}
