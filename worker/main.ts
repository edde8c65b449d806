/**
 * The pulse worker: polls TASK_QUEUE with the prebuilt workflow bundle (never bundling at start) and the node-step
 * activities of activities/, and GATEWAY_TASK_QUEUE with the state activities (node state, gateway file) unless
 * told this host does not hold the gateway file. `createPulseWorker` serves both `pulse worker` and the in-process worker of `pulse model up`;
 * `runWorker` is `pulse worker`: connect (clear error when the server is unreachable), run until SIGTERM/SIGINT,
 * then drain gracefully within SHUTDOWN_GRACE_TIME; structured logs (worker/logging.ts) and optional Prometheus
 * metrics (worker/metrics.ts).
 */
import { existsSync, readFileSync } from 'node:fs';
import type { Logger } from '@temporalio/common';
import { NativeConnection, Runtime, Worker } from '@temporalio/worker';
import type { NativeConnectionOptions } from '@temporalio/worker';
import { createActivities } from '../activities/index.js';
import type { ActivityDeps, ActivityLogger, PulseActivities } from '../activities/index.js';
import { PulseError } from '../runtime/errors.js';
import { defaultStateDir } from '../runtime/state/state.js';
import { checkStateDir } from '../runtime/state/state-dir.js';
import { GATEWAY_TASK_QUEUE, TASK_QUEUE, stateTaskQueue } from '../workflows/definitions.js';
import { buildDeps, fileSource, stderrLogger } from './deps.js';
import { lineLogger, parseLevel, withoutGatewayNotice, workerLogger } from './logging.js';
import { instrumentActivities, parseHostPort, privateExporterAddress, PulseMetrics, startMetricsServer } from './metrics.js';
import type { MetricsServer } from './metrics.js';
import { buildIdOf, DEPLOYMENT_NAME, deploymentOptions, promoteVersion, WORKFLOW_BUNDLE_PATH } from './versioning.js';
import type { BuildVersion } from './versioning.js';

/** Running activities get this long to finish after SIGTERM/SIGINT before they are cancelled. */
export const SHUTDOWN_GRACE_TIME = '10s';
export { WORKFLOW_BUNDLE_PATH } from './versioning.js';

export interface PulseWorkerOptions {
  connection: NativeConnection;
  namespace?: string;
  taskQueue?: string;
  /** Default: $PULSE_STATE_DIR, else the XDG state dir (runtime/state/state.ts defaultStateDir). */
  stateDir?: string;
  /** The worker's own nodes.json, the authority over what its activities run. Default: $PULSE_NODES, else runtime/nodes.json. */
  nodesPath?: string;
  logger?: ActivityLogger;
  /** Default WORKFLOW_BUNDLE_PATH. */
  bundlePath?: string;
  /** Replace parts of the real activity deps (tests: a pool on the simulator, a fake clock). */
  deps?: Partial<ActivityDeps>;
  /** Replace the activities entirely (tests with fakes). */
  activities?: PulseActivities;
  identity?: string;
  /** Also poll the gateway queue (default true): false on controller hosts that do not hold the gateway file. */
  gateway?: boolean;
  /** Record pulse's metrics of every activity here (worker/metrics.ts). */
  metrics?: PulseMetrics;
  /** The worker deployment to poll as (worker/versioning.ts); default DEPLOYMENT_NAME. */
  deploymentName?: string;
}

export interface PulseWorker {
  /** The Worker of the deploy queue (workflows and node steps). */
  worker: Worker;
  /** The Worker of the gateway queue (state activities), or null (`gateway: false`, or a private task queue). */
  gateway: Worker | null;
  /** The queues polled, deploy queue first. */
  taskQueues: string[];
  /** The deployment version both Workers poll as; deploys they start are pinned to it. */
  version: BuildVersion;
  /** Run until shutdown() or a shutdown signal, then close the node connections. */
  run(): Promise<void>;
  /** Run until `p` settles (the in-process worker of one deploy), then close the node connections. */
  runUntil<R>(p: Promise<R> | (() => Promise<R>)): Promise<R>;
  /** Start a graceful shutdown (idempotent). */
  shutdown(): void;
  /** The Temporal worker state (RUNNING, DRAINING, STOPPED...). */
  getState(): ReturnType<Worker['getState']>;
}

/** The state activities: they write $PULSE_STATE_DIR, so they run only where the gateway queue is polled. */
const STATE_ACTIVITIES = ['publishState', 'markFailed', 'planRolloutNode', 'guardRolloutStep', 'watchdogRecord'] as const;

function split(acts: PulseActivities): { node: Partial<PulseActivities>; state: Partial<PulseActivities> } {
  const node: Record<string, unknown> = { ...acts };
  const state: Record<string, unknown> = {};
  for (const k of STATE_ACTIVITIES) {
    if (!Object.hasOwn(node, k)) continue; // fakes in tests may lack the rollout's
    state[k] = node[k];
    delete node[k];
  }
  return { node: node as Partial<PulseActivities>, state: state as Partial<PulseActivities> };
}

/**
 * A worker for the pulse workflows and activities; does not start polling until run()/runUntil(). By default it
 * polls the deploy queue AND the gateway queue (two SDK Workers on one connection): a single host needs nothing
 * else. `gateway: false` polls the deploy queue only (an extra controller host without the gateway file).
 */
export async function createPulseWorker(opts: PulseWorkerOptions): Promise<PulseWorker> {
  const codePath = opts.bundlePath ?? WORKFLOW_BUNDLE_PATH;
  if (!existsSync(codePath)) {
    throw new PulseError('internal', `workflow bundle not found: ${codePath}`, { hint: 'build it: npx tsc && node dist/worker/build-bundle.js' });
  }
  const logger = opts.logger ?? stderrLogger();
  // A graceful shutdown hands the waits back at once (they resume elsewhere from their checkpoint); other steps finish.
  const stopping = new AbortController();
  // The state dir the worker writes: created 0700, or refused when another user owns or can write it.
  const stateDir = opts.stateDir ?? defaultStateDir();
  checkStateDir(stateDir, { create: true });
  const real = buildDeps(stateDir, logger, { stopping: stopping.signal, ...(opts.nodesPath ? { files: fileSource(opts.nodesPath) } : {}), ...opts.deps });
  const taskQueue = opts.taskQueue ?? TASK_QUEUE;
  const gatewayQueue = stateTaskQueue(taskQueue);
  let acts = opts.activities ?? createActivities(real.deps);
  if (opts.metrics) acts = instrumentActivities(acts, opts.metrics);
  // On a private queue the state activities stay on that queue (stateTaskQueue), so one Worker serves everything.
  const separate = gatewayQueue !== taskQueue;
  const parts = split(acts);
  const version = { deploymentName: opts.deploymentName ?? DEPLOYMENT_NAME, buildId: buildIdOf(readFileSync(codePath)) };
  const common = {
    connection: opts.connection,
    // Both Workers are one version, so a pinned deploy's state activities also stay on the build that started it.
    workerDeploymentOptions: deploymentOptions(version),
    namespace: opts.namespace ?? 'default',
    shutdownGraceTime: SHUTDOWN_GRACE_TIME,
    // Heartbeats reach the server at most every 2 s, so `watch` shows live wait progress (they are not history).
    maxHeartbeatThrottleInterval: '2s',
    ...(opts.identity ? { identity: opts.identity } : {}),
  };
  const worker = await Worker.create({ ...common, taskQueue, workflowBundle: { codePath }, activities: separate ? parts.node : acts });
  const gateway = separate && opts.gateway !== false ? await Worker.create({ ...common, taskQueue: gatewayQueue, activities: parts.state }) : null;
  const promote = (signal: AbortSignal): Promise<void> => promoteLogged({ namespace: common.namespace, service: opts.connection.workflowService, identity: worker.options.identity, taskQueue, version, signal }, logger);
  const together = runTogether(worker, gateway, logger, promote, () => real.close());
  const shutdown = (): void => {
    stopping.abort();
    together.shutdown();
  };
  return { worker, gateway, version, taskQueues: [worker, gateway].flatMap((w) => (w ? [w.options.taskQueue] : [])), getState: () => worker.getState(), ...together, shutdown };
}

/** Promote this version (worker/versioning.ts) and say what happened; never fails the worker. */
async function promoteLogged(o: Parameters<typeof promoteVersion>[0], logger: ActivityLogger): Promise<void> {
  const v = o.version.buildId;
  try {
    const r = await promoteVersion(o);
    if (r.kind === 'made-current') logger.info(`build ${v} is now the current version of deployment ${o.version.deploymentName}: new deploys run on it${r.previous ? `; deploys started on ${r.previous} finish there` : ''}`);
    else if (r.kind === 'left') logger.info(`build ${v} serves the deploys pinned to it; new deploys go to the current build ${r.current} (${r.reason})`);
    else if (r.kind === 'gave-up' && !o.signal?.aborted) logger.warn(`build ${v} could not become the current version (${r.reason}); new deploys go to the current one, if any`);
  } catch (err) {
    if (!o.signal?.aborted) logger.warn(`build ${v}: worker versioning unavailable on the server: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/**
 * Runs the gateway Worker beside the deploy Worker: one shutdown stops both, and either one failing stops the
 * other, so neither polls alone; `close` (the node connections) runs once both have stopped.
 */
function runTogether(worker: Worker, gateway: Worker | null, logger: ActivityLogger, promote: (signal: AbortSignal) => Promise<void>, close: () => Promise<void>): Pick<PulseWorker, 'run' | 'runUntil' | 'shutdown'> {
  const stopPromoting = new AbortController();
  const shutdown = (): void => {
    stopPromoting.abort();
    for (const w of [worker, gateway]) if (w?.getState() === 'RUNNING') w.shutdown();
  };
  const runGateway = async (): Promise<void> => {
    try {
      await gateway?.run();
    } catch (err) {
      shutdown();
      throw err;
    }
  };
  const settle = async <R>(main: () => Promise<R>, onGatewayError: (err: unknown) => void): Promise<R> => {
    const side = runGateway();
    // Polling has begun (the server registers the version on the first poll): promotion runs beside it.
    const promoting = promote(stopPromoting.signal);
    try {
      const [r] = await Promise.all([main().finally(shutdown), side.catch(onGatewayError)]);
      return r;
    } finally {
      await side.catch(() => undefined);
      stopPromoting.abort();
      await promoting;
      await close();
    }
  };
  return {
    shutdown,
    run: () => settle(() => worker.run(), (err) => {
      throw err;
    }),
    runUntil: <R>(p: Promise<R> | (() => Promise<R>)) =>
      settle(() => worker.runUntil(p), (err) => logger.warn(`gateway worker stopped: ${err instanceof Error ? err.message : String(err)}`)),
  };
}

export interface RunWorkerOptions {
  address: string;
  namespace?: string;
  taskQueue?: string;
  stateDir?: string;
  nodesPath?: string;
  tls?: NativeConnectionOptions['tls'];
  apiKey?: string;
  logger?: ActivityLogger;
  /** Poll the gateway queue too (default true); false: `pulse worker --no-gateway`. */
  gateway?: boolean;
  /** HOST:PORT to serve Prometheus metrics on (pulse's and Temporal's, worker/metrics.ts); default: none. */
  metricsAddress?: string;
  /**
   * Called as the worker starts to poll, with a graceful stop (the reason is logged): how a worker that ends by itself
   * (the embedded default's background worker, cli/deploy-client/worker-lifetime.ts) decides; returns its disposer.
   */
  lifetime?: (w: PulseWorker, stop: (reason: string) => void) => () => void;
}

/**
 * The process-wide SDK runtime of `pulse worker`: our line logger (JSON when stderr is not a TTY) for the SDK's own
 * lines and the activities' context loggers, and, with metrics on, the SDK's Prometheus exporter on a private
 * loopback port. Runtime.install works once per process, before any connection: a runtime already there (a test
 * process) is kept, and then the SDK's metrics are missing from the scrape (said once as a warning).
 */
async function installRuntime(sdkLogger: Logger, metrics: boolean): Promise<string | null> {
  const temporalMetrics = metrics ? await privateExporterAddress() : null;
  try {
    Runtime.install({
      logger: withoutGatewayNotice(sdkLogger, GATEWAY_TASK_QUEUE),
      ...(temporalMetrics ? { telemetryOptions: { metrics: { prometheus: { bindAddress: temporalMetrics } } } } : {}),
    });
    return temporalMetrics;
  } catch (err) {
    sdkLogger.warn(`Temporal runtime already installed in this process (${err instanceof Error ? err.message : String(err)}): keeping it`);
    return null;
  }
}

/** `pulse worker`: connect, poll until SIGTERM/SIGINT, drain. Throws PulseError('temporal') if the server is unreachable. */
export async function runWorker(opts: RunWorkerOptions): Promise<void> {
  const sdkLogger = lineLogger({ level: parseLevel(process.env['PULSE_LOG_LEVEL']) });
  const logger = opts.logger ?? workerLogger(sdkLogger);
  if (opts.metricsAddress) parseHostPort(opts.metricsAddress); // a bad address fails before anything starts
  const temporalMetrics = await installRuntime(sdkLogger, Boolean(opts.metricsAddress));
  const metrics = opts.metricsAddress ? new PulseMetrics() : undefined;
  let connection: NativeConnection;
  try {
    connection = await NativeConnection.connect({ address: opts.address, ...(opts.tls ? { tls: opts.tls } : {}), ...(opts.apiKey ? { apiKey: opts.apiKey } : {}) });
  } catch (err) {
    throw new PulseError('temporal', `cannot reach the Temporal server at ${opts.address}: ${err instanceof Error ? err.message : String(err)}`, {
      hint: 'start it (or unset TEMPORAL_ADDRESS/--temporal to use the embedded dev server) and run pulse worker again',
    });
  }
  let server: MetricsServer | null = null;
  try {
    const w = await createPulseWorker({ ...opts, connection, logger, ...(metrics ? { metrics } : {}) });
    if (opts.metricsAddress && metrics) {
      server = await startMetricsServer(opts.metricsAddress, metrics, temporalMetrics);
      logger.info(`metrics on http://${server.address}/metrics`);
    }
    const onSignal = (sig: NodeJS.Signals): void => {
      logger.info(`${sig} received: handing the waits back, finishing running steps (up to ${SHUTDOWN_GRACE_TIME}), then exiting; deploys resume on the next worker`);
      w.shutdown();
    };
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
    for (const q of w.taskQueues) logger.info(`polling task queue ${q} on ${opts.address} (namespace ${opts.namespace ?? 'default'})`);
    logger.info(`build ${w.version.buildId} of worker deployment ${w.version.deploymentName}: the deploys this build starts finish on it (docs/PRODUCTION.md "Upgrading pulse")`);
    // Every plan is checked against the worker's own files (activities/authority.ts): say now when they cannot be read.
    try {
      fileSource(opts.nodesPath).load();
    } catch (e) {
      logger.warn(`every deploy is refused until this worker can read its nodes.json and profiles: ${e instanceof Error ? e.message : String(e)}`);
    }
    if (!w.gateway && w.taskQueues[0] === TASK_QUEUE) logger.info(`not polling ${GATEWAY_TASK_QUEUE}: node state and the gateway file are written by the worker on the gateway host`);
    const endLifetime = opts.lifetime?.(w, (reason) => {
      logger.info(reason);
      w.shutdown();
    });
    try {
      await w.run();
    } finally {
      endLifetime?.();
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
    }
    logger.info('stopped');
  } finally {
    await server?.close();
    await connection.close();
  }
}
