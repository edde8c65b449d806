/**
 * The warning a plain up or down prints (and up's dry-run) when its node is the last endpoint that serves the model
 * (issue 27 item 4): a plain deploy is not refused, the operator is told. Shared by the up, down and dry-run commands,
 * which never import each other; it loads no Temporal or ssh code (the dry-run must not).
 */
import type { UpOptions } from './options.js';

export async function outageWarning(opts: Pick<UpOptions, 'node' | 'nodes'>, action: 'up' | 'down'): Promise<string | null> {
  const { loadNodesConfig } = await import('../runtime/config/nodes.js');
  const { resolveNodesPath } = await import('../runtime/state/paths.js');
  const { trustedStateDir } = await import('../runtime/state/state.js');
  const { lastEndpointWarning } = await import('../runtime/fleet/rollout.js');
  return lastEndpointWarning(loadNodesConfig(resolveNodesPath(opts.nodes)), trustedStateDir(), opts.node, action);
}
