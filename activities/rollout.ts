/**
 * The activities of a rollout (issue 15). The request only names nodes, a profile and flags; the worker checks it
 * against its own nodes.json and profiles (a protected node needs the request's --yes here too), plans each node as
 * `pulse model up/down --node` would (runtime/fleet/rollout.ts), reads the gateway backend file for the availability
 * guard, and runs the gate's smoke request on the node (runtime/status/smoke.ts, as `pulse model smoke`).
 */
import { Context } from '@temporalio/activity';
import { WorkflowNotFoundError } from '@temporalio/common';
import { nodeOf } from '../runtime/config/nodes.js';
import { fleetOf } from '../runtime/plan/plan.js';
import { refusePlan } from '../runtime/plan/plan-check.js';
import {
  awaitingTunnelProbe, checkRolloutRequest, gatewayEndpoints, guardVerdict, nodePlanOf, parseReservations, reservationHolds, reservationsPath,
  TUNNEL_PROBE_WAIT_MS, watchdogDown, type DeployRun, type Reservation,
} from '../runtime/fleet/rollout.js';
import type { GatewayEndpoint } from '../runtime/gateway/gateway.js';
import { readFileOrNull, withStateLock, writeFileAtomic } from '../runtime/state/state-files.js';
import { utc } from '../runtime/format.js';
import { targetOf } from '../runtime/config/nodes.js';
import { runSmoke, type SmokeResult } from '../runtime/status/smoke.js';
import { idleEndpoints } from '../runtime/fleet/serving.js';
import type { DownPlan, GuardVerdict, RolloutRequest, UpPlan } from '../runtime/model/index.js';
import type { ActivityDeps, WorkflowRuns } from './deps.js';
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

/** The guard's bound on each stage of asking a node (connect, status.sh, the lock read): its activity has 30 s, the tunnel wait up to 15 of them. */
const GUARD_ASK_MS = 5_000;

/** No Temporal to ask (tests without a client): no deploy runs, no reservation's rollout is open. */
const NO_TEMPORAL: WorkflowRuns = { latest: () => Promise.resolve(null), open: () => Promise.resolve(false) };

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
      const runs = deps.workflowRuns ?? NO_TEMPORAL;
      const me = Context.current().info.workflowExecution ?? { workflowId: '', runId: '' };
      // Only a member that serves counts (a disruption budget's rule): the enabled endpoints are asked once, as
      // status asks them, and one whose server cannot take traffic now neither counts beside the step nor in it.
      const idle = await idleEndpoints(files.config, gatewayEndpoints(deps.stateDir, fleet), request.confirmed, {
        open: (target) => Promise.resolve(deps.nodes.session(target)), stateDir: deps.stateDir, nodeTimeoutMs: GUARD_ASK_MS,
      }, watchdogDown(deps.stateDir));
      const start = deps.clock.monotonic();
      for (;;) {
        const endpoints = gatewayEndpoints(deps.stateDir, fleet);
        const verdict = await reserveStep(deps.stateDir, endpoints, nodes, request.allowOutage, me, runs, utc(deps.clock.now()), idle);
        // A tunnelled node that just passed its gate serves once the tunnel's next probe answers: wait for it, bounded.
        const pending = verdict.refused === null ? [] : awaitingTunnelProbe(deps.stateDir, fleet, endpoints, nodes);
        if (pending.length === 0 || deps.clock.monotonic() - start >= TUNNEL_PROBE_WAIT_MS) {
          if (verdict.refused === null) deps.logger.info(`rollout guard admits ${nodes.join(', ')}: serving meanwhile ${verdict.serving.join(', ') || 'none'}${verdict.notServing.length > 0 ? `; not counted: ${verdict.notServing.join(', ')}` : ''}`);
          return { serving: verdict.serving, refused: verdict.refused };
        }
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

/**
 * The guard's decision and its reservation, serialised with every other guard: what needs Temporal (is a node's
 * deploy open, is a reservation's rollout still open) is asked first, then, under the state lock, the reservations
 * are read again, the stale and spent ones dropped, the verdict made and, when the step is admitted, its nodes
 * reserved in the same write. A reservation made by another guard after the questions counts as holding.
 */
async function reserveStep(
  stateDir: string, endpoints: GatewayEndpoint[], nodes: string[], allowOutage: boolean, me: { workflowId: string; runId: string },
  runs: WorkflowRuns, at: string, idle: ReadonlyMap<string, string>,
): Promise<GuardVerdict & { notServing: string[] }> {
  const file = reservationsPath(stateDir);
  const seen = parseReservations(readFileOrNull(file));
  const names = [...new Set([...endpoints.map((e) => e.name), ...nodes, ...seen.map((r) => r.node)])];
  const deploys = new Map<string, DeployRun | null>();
  for (const n of names) deploys.set(n, await runs.latest(n));
  const ownerKey = (o: Reservation['owner']): string => `${o.workflowId}/${o.runId}`;
  const owners = new Map<string, boolean>();
  for (const r of seen) {
    const k = ownerKey(r.owner);
    if (!owners.has(k) && k !== ownerKey(me)) owners.set(k, await runs.open(r.owner.workflowId, r.owner.runId));
  }
  const down = watchdogDown(stateDir);
  return withStateLock(stateDir, () => {
    const now = parseReservations(readFileOrNull(file));
    const live = now.filter((r) => {
      if (ownerKey(r.owner) === ownerKey(me)) return false; // this rollout's earlier step (spent) or this step's own retry
      const open = owners.get(ownerKey(r.owner));
      return open === undefined || reservationHolds(r, open, deploys.get(r.node) ?? null);
    });
    const notServing = new Set<string>(live.map((r) => r.node));
    for (const [n, d] of deploys) if (d?.running) notServing.add(n);
    for (const n of down) notServing.add(n);
    for (const n of idle.keys()) notServing.add(n);
    const verdict = guardVerdict(endpoints, nodes, allowOutage, notServing);
    const next = verdict.refused === null
      ? [...live, ...nodes.map((node): Reservation => ({ node, owner: { ...me }, deployRunId: deploys.get(node)?.runId ?? null, at }))]
      : live;
    if (next.length !== now.length || verdict.refused === null) writeFileAtomic(file, `${JSON.stringify({ reservations: next }, null, 2)}\n`);
    return { ...verdict, notServing: [...notServing].sort() };
  });
}


/**
 * WorkflowRuns over the worker's client (Context.current().client); `deployId` names a node's deploy workflow
 * (workflows/definitions.ts workflowIdFor, which the worker passes in). Without a client (a mock) nothing runs.
 */
export function workerWorkflowRuns(deployId: (node: string) => string): WorkflowRuns {
  const describe = async (workflowId: string, runId?: string): Promise<DeployRun | null> => {
    let client;
    try {
      client = Context.current().client;
    } catch {
      return null;
    }
    try {
      const d = await client.workflow.getHandle(workflowId, runId).describe();
      return { runId: d.runId, running: d.status.name === 'RUNNING' };
    } catch (e) {
      if (e instanceof WorkflowNotFoundError) return null;
      throw e;
    }
  };
  return {
    latest: (node) => describe(deployId(node)),
    open: async (workflowId, runId) => (await describe(workflowId, runId))?.running ?? false,
  };
}
