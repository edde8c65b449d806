/**
 * The warning a plain up or down prints (and up's dry-run) when its node is the last endpoint that serves the model
 * (issue 27 item 4): a plain deploy is not refused, the operator is told. Shared by the up, down and dry-run commands,
 * which never import each other. The dry-run loads no Temporal or ssh code and asks no node (it runs nothing on one):
 * its line is the gateway file's word. A real up or down whose node the file shows as the last endpoint asks that
 * node as `status` does first: one that serves nothing now (stopped, failing, ...) takes no endpoint away, and the
 * rollout's guard would not count it either, so no warning.
 */
import type { UpOptions } from './options.js';

export async function outageWarning(opts: Pick<UpOptions, 'node' | 'nodes' | 'yes'>, action: 'up' | 'down', ask = true): Promise<string | null> {
  const { loadNodesConfig } = await import('../runtime/config/nodes.js');
  const { resolveNodesPath } = await import('../runtime/state/paths.js');
  const { trustedStateDir } = await import('../runtime/state/state.js');
  const { gatewayEndpoints, lastEndpointWarning } = await import('../runtime/fleet/rollout.js');
  const config = loadNodesConfig(resolveNodesPath(opts.nodes));
  const stateDir = trustedStateDir();
  const warning = lastEndpointWarning(config, stateDir, opts.node, action);
  if (warning === null || !ask) return warning;
  const { fleetOf } = await import('../runtime/plan/plan.js');
  const { idleEndpoints } = await import('../runtime/fleet/serving.js');
  const { openSession } = await import('../runtime/node/connect.js');
  const mine = gatewayEndpoints(stateDir, fleetOf(config)).filter((e) => e.name === opts.node);
  const idle = await idleEndpoints(config, mine, opts.yes, { open: openSession, stateDir });
  return lastEndpointWarning(config, stateDir, opts.node, action, new Set(idle.keys()));
}
