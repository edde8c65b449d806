/**
 * `pulse worker`: the long-running worker (until SIGTERM/SIGINT). The in-process worker that up/down/watch run
 * when none polls is cli/deploy-client/local-worker.ts.
 */
import type { WorkerOptions } from '../options.js';
import { PulseError } from '../../runtime/errors.js';
import { connectTemporal, workerConnectOptions } from '../temporal.js';
import { TASK_QUEUE } from '../../workflows/definitions.js';

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
