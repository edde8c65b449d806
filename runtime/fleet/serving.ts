/**
 * Which endpoints the gateway file enables really serve now, asked as `status` asks (read-only status.sh, and GET
 * /v1/models and /health where HTTP is allowed). The availability guard counts only healthy members, as a
 * disruption budget does: an enabled node whose server is stopped, failing, failed, down or deploying takes no
 * traffic, so counting it would both refuse a step that takes nothing away (bringing up a stopped node) and admit
 * one that leaves nothing serving. One rule for the rollout's guard (activities/rollout.ts), its dry-run plan and the
 * warning of a plain up/down (cli/commands/rollout.ts, cli/outage-warning.ts), so the plan, the guard and the
 * warnings say the same thing.
 */
import type { NodesConfig } from '../config/nodes.js';
import { statusOfNode, type StatusDeps } from '../status/collect.js';
import { healthCell } from '../status/glance.js';
import { notServingOf, verdictOf } from '../status/verdict.js';
import type { GatewayEndpoint } from '../gateway/gateway.js';
import { servingEndpoint } from './rollout.js';

/**
 * Each asked node that cannot take traffic now, with its health cell (`stopped`, `failing: /health 503`). Asks the
 * nodes among `endpoints` the file counts as serving (minus `skip`, already known not to serve), in parallel. A node
 * that does not answer is not in it: its endpoint keeps the file's word (an ssh that fails says nothing about HTTP).
 */
export async function idleEndpoints(
  config: NodesConfig, endpoints: GatewayEndpoint[], yes: boolean, deps: StatusDeps, skip: ReadonlySet<string> = new Set(),
): Promise<Map<string, string>> {
  const asked = endpoints.filter((e) => servingEndpoint(e) && !skip.has(e.name) && Object.hasOwn(config.nodes, e.name)).map((e) => e.name);
  const nodes = await Promise.all(asked.map(async (node) => {
    const st = await statusOfNode(config, node, { node, http: true, gpuProbe: false, yes, healthRoute: true }, deps);
    return Object.assign(st, verdictOf(st));
  }));
  const idle = notServingOf(nodes);
  return new Map(nodes.filter((n) => idle.has(n.node)).map((n) => [n.node, healthCell(n)]));
}
