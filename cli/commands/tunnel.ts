/**
 * `pulse tunnel`: on the gateway host, keep an ssh port forward to each node with gatewayTunnel in nodes.json
 * (runtime/gateway/tunnel), and keep their endpoints in the gateway backend file in step with it. Runs until SIGTERM or
 * SIGINT; a clean stop disables the tunnelled endpoints. One line per event on stdout (journald adds the time).
 */
import { loadNodesConfig } from '../../runtime/config/nodes.js';
import { resolveNodesPath } from '../../runtime/state/paths.js';
import { trustedStateDir } from '../../runtime/state/state.js';
import type { GlobalOptions } from '../options.js';

export interface TunnelOptions extends GlobalOptions {
  /** --probe-interval-s: how often GET /health goes through each tunnel. */
  probeIntervalS?: number | undefined;
}

export async function run(opts: TunnelOptions): Promise<number> {
  const nodesPath = resolveNodesPath(opts.nodes);
  const config = loadNodesConfig(nodesPath);
  const { runTunnels } = await import('../../runtime/gateway/tunnel/run.js');
  const stop = new AbortController();
  const onSignal = (): void => stop.abort();
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  try {
    await runTunnels({
      config,
      reload: () => loadNodesConfig(nodesPath),
      stateDir: trustedStateDir(),
      signal: stop.signal,
      log: (line) => process.stdout.write(`pulse tunnel: ${line}\n`),
      ...(opts.probeIntervalS ? { timings: { probeIntervalMs: opts.probeIntervalS * 1000 } } : {}),
    });
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  }
  process.stdout.write('pulse tunnel: stopped; the tunnelled endpoints are disabled in the gateway backend file\n');
  return 0;
}
