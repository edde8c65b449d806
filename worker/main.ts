/**
 * The pulse worker: polls TASK_QUEUE with the prebuilt workflow bundle (never bundling at start) and the activities
 * of activities/. `createPulseWorker` serves both `pulse worker` and the in-process worker of `pulse model up`;
 * `runWorker` is `pulse worker`: connect (clear error when the server is unreachable), run until SIGTERM/SIGINT,
 * then drain gracefully within SHUTDOWN_GRACE_TIME.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { NativeConnection, Worker } from '@temporalio/worker';
import type { NativeConnectionOptions } from '@temporalio/worker';
import { createActivities } from '../activities/index.js';
import type { ActivityDeps, ActivityLogger, PulseActivities } from '../activities/index.js';
import { PulseError } from '../runtime/errors.js';
import { defaultStateDir } from '../runtime/state.js';
import { TASK_QUEUE } from '../workflows/definitions.js';
import { buildDeps, stderrLogger } from './deps.js';

/** Running activities get this long to finish after SIGTERM/SIGINT before they are cancelled. */
export const SHUTDOWN_GRACE_TIME = '10s';
/** The prebuilt bundle (node dist/worker/build-bundle.js), beside this file's dist/worker/ directory. */
export const WORKFLOW_BUNDLE_PATH = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'workflow-bundle.js');

export interface PulseWorkerOptions {
  connection: NativeConnection;
  namespace?: string;
  taskQueue?: string;
  /** Default: $PULSE_STATE_DIR, else the XDG state dir (runtime/state.ts defaultStateDir). */
  stateDir?: string;
  logger?: ActivityLogger;
  /** Default WORKFLOW_BUNDLE_PATH. */
  bundlePath?: string;
  /** Replace parts of the real activity deps (tests: a pool on the simulator, a fake clock). */
  deps?: Partial<ActivityDeps>;
  /** Replace the activities entirely (tests with fakes). */
  activities?: PulseActivities;
  identity?: string;
}

export interface PulseWorker {
  worker: Worker;
  /** Run until shutdown() or a shutdown signal, then close the node connections. */
  run(): Promise<void>;
  /** Run until `p` settles (the in-process worker of one deploy), then close the node connections. */
  runUntil<R>(p: Promise<R> | (() => Promise<R>)): Promise<R>;
  /** Start a graceful shutdown (idempotent). */
  shutdown(): void;
  /** The Temporal worker state (RUNNING, DRAINING, STOPPED...). */
  getState(): ReturnType<Worker['getState']>;
}

/** A worker for the pulse workflows and activities; does not start polling until run()/runUntil(). */
export async function createPulseWorker(opts: PulseWorkerOptions): Promise<PulseWorker> {
  const codePath = opts.bundlePath ?? WORKFLOW_BUNDLE_PATH;
  if (!existsSync(codePath)) {
    throw new PulseError('internal', `workflow bundle not found: ${codePath}`, { hint: 'build it: npx tsc && node dist/worker/build-bundle.js' });
  }
  const logger = opts.logger ?? stderrLogger();
  const real = buildDeps(opts.stateDir ?? defaultStateDir(), logger, opts.deps);
  const worker = await Worker.create({
    connection: opts.connection,
    namespace: opts.namespace ?? 'default',
    taskQueue: opts.taskQueue ?? TASK_QUEUE,
    workflowBundle: { codePath },
    activities: opts.activities ?? createActivities(real.deps),
    shutdownGraceTime: SHUTDOWN_GRACE_TIME,
    // Heartbeats reach the server at most every 2 s, so `watch` shows live wait progress (they are not history).
    maxHeartbeatThrottleInterval: '2s',
    ...(opts.identity ? { identity: opts.identity } : {}),
  });
  const shutdown = (): void => {
    if (worker.getState() === 'RUNNING') worker.shutdown();
  };
  return {
    worker,
    shutdown,
    getState: () => worker.getState(),
    run: async () => {
      try {
        await worker.run();
      } finally {
        await real.close();
      }
    },
    runUntil: async <R>(p: Promise<R> | (() => Promise<R>)) => {
      try {
        return await worker.runUntil(p);
      } finally {
        await real.close();
      }
    },
  };
}

export interface RunWorkerOptions {
  address: string;
  namespace?: string;
  taskQueue?: string;
  stateDir?: string;
  tls?: NativeConnectionOptions['tls'];
  apiKey?: string;
  logger?: ActivityLogger;
}

/** `pulse worker`: connect, poll until SIGTERM/SIGINT, drain. Throws PulseError('temporal') if the server is unreachable. */
export async function runWorker(opts: RunWorkerOptions): Promise<void> {
  const logger = opts.logger ?? stderrLogger();
  let connection: NativeConnection;
  try {
    connection = await NativeConnection.connect({ address: opts.address, ...(opts.tls ? { tls: opts.tls } : {}), ...(opts.apiKey ? { apiKey: opts.apiKey } : {}) });
  } catch (err) {
    throw new PulseError('temporal', `cannot reach the Temporal server at ${opts.address}: ${err instanceof Error ? err.message : String(err)}`, {
      hint: 'start it (or unset TEMPORAL_ADDRESS/--temporal to use the embedded dev server) and run pulse worker again',
    });
  }
  try {
    const w = await createPulseWorker({ ...opts, connection, logger });
    const onSignal = (sig: NodeJS.Signals): void => {
      logger.info(`${sig} received: finishing running steps (up to ${SHUTDOWN_GRACE_TIME}), then exiting; deploys resume on the next worker`);
      w.shutdown();
    };
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
    logger.info(`polling task queue ${opts.taskQueue ?? TASK_QUEUE} on ${opts.address} (namespace ${opts.namespace ?? 'default'})`);
    try {
      await w.run();
    } finally {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
    }
    logger.info('stopped');
  } finally {
    await connection.close();
  }
}
