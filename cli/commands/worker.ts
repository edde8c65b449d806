/**
 * `pulse worker`: the long-running worker (until SIGTERM/SIGINT). The in-process worker that up/down/watch run
 * beside a configured server when none polls is cli/deploy-client/local-worker.ts; `--background` (hidden) is the
 * worker they start beside the embedded server (cli/deploy-client/background-worker.ts): it serves only that running server, and
 * ends with it or after PULSE_WORKER_IDLE_S idle seconds.
 */
import type { WorkerOptions } from '../options.js';
import { PulseError } from '../../runtime/errors.js';
import { configuredOrRunningServer, connectTemporal, connectTo, stateDir, workerConnectOptions, type PulseTemporal } from '../deploy-client/temporal.js';
import { TASK_QUEUE } from '../../workflows/definitions.js';

/** `pulse worker` options beyond the shared ones. */
export interface WorkerRunOptions extends WorkerOptions {
  /** false: `--no-gateway` (or PULSE_WORKER_GATEWAY=0), poll only the deploy queue (a host without the gateway file). */
  gateway?: boolean;
  /** `--metrics HOST:PORT`, else $PULSE_METRICS_ADDRESS; unset: no metrics endpoint. */
  metrics?: string | undefined;
  /** `--background`: the embedded default's background worker (started by the CLI, not by an operator). */
  background?: boolean;
}

/** The background worker attaches to the embedded server that runs now; it never starts one. */
async function backgroundTarget(opts: WorkerRunOptions): Promise<{ t: PulseTemporal; serverPid: number }> {
  const target = await configuredOrRunningServer(opts);
  if (!target?.embedded) throw new PulseError('temporal', 'pulse worker --background serves the embedded Temporal server, and none runs', { hint: 'run `pulse worker` instead' });
  return { t: await connectTo(target), serverPid: target.embedded.pid };
}

export async function run(opts: WorkerRunOptions): Promise<number> {
  const metricsAddress = opts.metrics ?? (process.env['PULSE_METRICS_ADDRESS'] || undefined);
  const { runWorker } = await import('../../worker/main.js');
  if (metricsAddress) {
    const { parseHostPort } = await import('../../worker/metrics.js');
    parseHostPort(metricsAddress, opts.metrics ? '--metrics' : 'PULSE_METRICS_ADDRESS'); // usage error before connecting
  }
  const { resolveNodesPath } = await import('../../runtime/state/paths.js');
  const bg = opts.background ? await backgroundTarget(opts) : null;
  const t = bg?.t ?? (await connectTemporal(opts));
  let lifetime: Parameters<typeof runWorker>[0]['lifetime'];
  if (bg) {
    const { workerIdleS } = await import('../deploy-client/background-worker.js');
    const { backgroundLifetime } = await import('../deploy-client/worker-lifetime.js');
    lifetime = backgroundLifetime(t, { serverPid: bg.serverPid, idleS: workerIdleS() });
    process.on('SIGHUP', () => undefined); // its own session has no terminal; a stray hangup must not end a deploy
  }
  try {
    await runWorker({
      nodesPath: resolveNodesPath(opts.nodes),
      ...workerConnectOptions(t.target),
      namespace: t.target.namespace,
      taskQueue: opts.taskQueue ?? TASK_QUEUE,
      gateway: opts.gateway !== false && !/^(0|false|no)$/i.test(process.env['PULSE_WORKER_GATEWAY'] ?? ''),
      ...(metricsAddress ? { metricsAddress } : {}),
      ...(lifetime ? { lifetime } : {}),
    });
  } catch (e) {
    if (e instanceof PulseError) throw e;
    throw new PulseError('temporal', `the worker stopped: ${(e as Error).message}`, { cause: e });
  } finally {
    if (bg) await (await import('../deploy-client/background-worker.js')).forgetBackgroundWorker(stateDir(), process.pid);
    await t.close();
  }
  return 0;
}
