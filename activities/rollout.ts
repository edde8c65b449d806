/**
 * The activities of a rollout (issue 15). The request only names nodes, a profile and flags; the worker checks it
 * against its own nodes.json and profiles (a protected node needs the request's --yes here too), plans each node as
 * `pulse model up/down --node` would (runtime/fleet/rollout.ts), reads the gateway backend file for the availability
 * guard, and runs the gate's smoke request on the node (runtime/status/smoke.ts, as `pulse model smoke`).
 */
import { Context } from '@temporalio/activity';
import { nodeOf } from '../runtime/config/nodes.js';
import { fleetOf } from '../runtime/plan/plan.js';
import { refusePlan } from '../runtime/plan/plan-check.js';
import { awaitingTunnelProbe, checkRolloutRequest, gatewayEndpoints, guardVerdict, nodePlanOf, TUNNEL_PROBE_WAIT_MS } from '../runtime/fleet/rollout.js';
import { targetOf } from '../runtime/config/nodes.js';
import { runSmoke, type SmokeResult } from '../runtime/status/smoke.js';
import type { DownPlan, GuardVerdict, RolloutRequest, UpPlan } from '../runtime/model/index.js';
import type { ActivityDeps } from './deps.js';
import { classified } from './errors.js';
import { nodeStep } from './heartbeat.js';

export interface RolloutNodeInput {
  request: RolloutRequest;
  node: string;
}

export interface GuardInput {
  request: RolloutRequest;
  /** The nodes this step takes down (one, or up to --max-parallel). */
  nodes: string[];
}

/** The activities rolloutWorkflow schedules (the workflow imports this type only). */
export interface RolloutActivities {
  /** The node's plan, made by the worker from its own files (on the gateway queue: it reads the node state). */
  planRolloutNode(input: RolloutNodeInput): Promise<UpPlan | DownPlan>;
  /** The availability guard: the endpoints that stay enabled while the step's nodes go (gateway queue); waits up to 15 s for a tunnel probe a just-gated node needs. */
  guardRolloutStep(input: GuardInput): Promise<GuardVerdict>;
  /** The gate's smoke request on a node that just came up. */
  smokeRolloutNode(input: RolloutNodeInput): Promise<SmokeResult>;
}

export function rolloutActivities(deps: ActivityDeps): RolloutActivities {
  const own = (input: { request: unknown; node?: unknown }) => {
    const files = deps.files.load();
    const request = classified(() => {
      const r = checkRolloutRequest(files.config, files.profiles, input.request);
      if (input.node !== undefined && !r.nodes.includes(input.node as string)) throw refusePlan(`node ${JSON.stringify(input.node)} is not in this rollout`);
      return r;
    });
    return { files, request };
  };
  return {
    async planRolloutNode(input) {
      const { files, request } = own(input);
      const state = await deps.state.readNodeState(deps.stateDir, input.node);
      // Seconds, as the CLI's plans are rendered (the plan check compares renderedAt as UTC seconds).
      const now = new Date(Math.floor(deps.clock.now() / 1000) * 1000);
      return classified(() => nodePlanOf(files.config, files.profiles, request, input.node, state, now));
    },
    async guardRolloutStep(input) {
      const { files, request } = own(input);
      const nodes = classified(() => {
        if (!Array.isArray(input.nodes) || !input.nodes.every((n) => request.nodes.includes(n))) throw refusePlan('the guard names a node outside the rollout');
        return input.nodes;
      });
      const fleet = fleetOf(files.config);
      const sleep = deps.sleep ?? ((ms: number) => Context.current().sleep(ms));
      const start = deps.clock.monotonic();
      for (;;) {
        const endpoints = gatewayEndpoints(deps.stateDir, fleet);
        const verdict = guardVerdict(endpoints, nodes, request.allowOutage);
        // A tunnelled node that just passed its gate serves once the tunnel's next probe answers: wait for it, bounded.
        const pending = verdict.refused === null ? [] : awaitingTunnelProbe(deps.stateDir, fleet, endpoints, nodes);
        if (pending.length === 0 || deps.clock.monotonic() - start >= TUNNEL_PROBE_WAIT_MS) return verdict;
        await sleep(250);
      }
    },
    async smokeRolloutNode(input) {
      const { files } = own(input);
      const node = classified(() => nodeOf(files.config, input.node));
      const r = await nodeStep(deps.heartbeatEveryMs ?? 5000, () => runSmoke(deps.nodes.session(targetOf(input.node, node)), input.node, node));
      deps.logger.info(`rollout gate smoke on ${input.node}: ${r.ok ? 'pass' : `fail (${r.error ?? '?'})`}`);
      return r;
    },
  };
}
