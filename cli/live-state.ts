/**
 * The node as it is now, in one line, for a deploy that ended before it changed anything and before its preflight
 * saw the container (DeployResult.state 'unchanged'): "node down" would be a lie for a node that still serves.
 * Read-only (status.sh without HTTP, so a protected node is asked nothing it would refuse); never throws.
 */
import type { NodeStatus } from '../runtime/status/types.js';

const TIMEOUT_MS = 20_000;

function describe(node: string, s: NodeStatus): string {
  if (!s.answered) return `pulse changed nothing on ${node}; its state now is unknown (${s.error ?? 'no answer'}): pulse model status --node ${node}`;
  const c = s.container;
  if (c?.running) return `pulse changed nothing on ${node}: it still serves (container ${c.name} running${s.env?.profile ? `, profile ${s.env.profile}` : ''})`;
  return `pulse changed nothing on ${node}: no server runs there (container ${c?.name ?? '?'}: ${c?.state ?? 'absent'})`;
}

/** One line on `node` now; `nodes` is the command's --nodes. */
export async function liveStateLine(node: string, nodes: string | undefined): Promise<string> {
  try {
    const { loadNodesConfig } = await import('../runtime/config/nodes.js');
    const { resolveNodesPath } = await import('../runtime/state/paths.js');
    const { statusOfNode } = await import('../runtime/status/collect.js');
    const { openSession } = await import('../runtime/node/connect.js');
    const { trustedStateDir } = await import('../runtime/state/state.js');
    const config = loadNodesConfig(resolveNodesPath(nodes));
    if (!Object.hasOwn(config.nodes, node)) return `pulse changed nothing on ${node}; ${config.file} does not list it, so its state now is unknown`;
    const req = { node, http: false, gpuProbe: false, yes: false };
    return describe(node, await statusOfNode(config, node, req, { open: openSession, stateDir: trustedStateDir(), nodeTimeoutMs: TIMEOUT_MS }));
  } catch (e) {
    return `pulse changed nothing on ${node}; its state now is unknown (${(e as Error).message}): pulse model status --node ${node}`;
  }
}
