/**
 * The node a command names must be in nodes.json: an unknown node is a config error (exit 3) with a did-you-mean,
 * the same in every command, before any Temporal connection or ssh session.
 */
import { loadNodesConfig, nodeOf, type NodeConfig } from '../runtime/config/nodes.js';
import { resolveNodesPath } from '../runtime/state/paths.js';

export function knownNode(nodesFile: string | undefined, node: string): NodeConfig {
  return nodeOf(loadNodesConfig(resolveNodesPath(nodesFile)), node);
}
