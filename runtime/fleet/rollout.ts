/**
 * The pure parts of a rollout (issue 15), shared by the CLI (order, dry-run) and the worker (activities/rollout.ts):
 * the node order, the rollout's workflow ID, the check of a request against a nodes.json, each node's plan (made as
 * `pulse model up/down --node` makes it), and the availability guard's verdict on a gateway backend file.
 */
import path from 'node:path';
import type { NodesConfig } from '../config/nodes.js';
import type { Profile } from '../config/profile.js';
import { PulseError } from '../errors.js';
import { buildFragment, disableReason, fragmentPath, type GatewayEndpoint, type GatewayFragment } from '../gateway/gateway.js';
import { downPlanFor, fleetOf, upPlanFor } from '../plan/plan.js';
import { scanNodeStates } from '../state/state.js';
import { readFileOrNull } from '../state/state-files.js';
import { NO_TUNNEL, readTunnelHealth } from '../gateway/tunnel/health.js';
import type { DownPlan, FleetEntry, GuardVerdict, NodeState, RolloutRequest, UpPlan } from '../model/index.js';


/** `--node a,b` as given, or `--all`: the unprotected nodes first (the canary), the protected ones last. */
export function rolloutOrder(config: NodesConfig, nodes: string[] | 'all'): string[] {
  const names = Object.keys(config.nodes);
  if (nodes === 'all') return [...names.filter((n) => !config.nodes[n]?.protected), ...names.filter((n) => config.nodes[n]?.protected)];
  return nodes;
}

/** The rollout's own workflow ID: one rollout per node set at a time (each child still holds its node's ID). */
export function rolloutIdFor(nodes: string[]): string {
  return `pulse-rollout-${[...nodes].sort().join('+')}`;
}

/** The protected nodes of the set (each needs the one --yes). */
export function protectedOf(config: NodesConfig, nodes: string[]): string[] {
  return nodes.filter((n) => config.nodes[n]?.protected === true);
}

const isName = (v: unknown): v is string => typeof v === 'string' && /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(v);
const isBool = (v: unknown): v is boolean => typeof v === 'boolean';
const isBudget = (v: unknown): boolean => v === null || (typeof v === 'number' && Number.isFinite(v) && v > 0 && v <= 7 * 86400);

/**
 * The request as pulse sends it, its nodes and profile the given files' own, and a protected node only with --yes
 * (the worker calls this too: the confirmation holds on the worker side). Throws a refusal naming what is wrong.
 */
export function checkRolloutRequest(config: NodesConfig, profiles: ReadonlyMap<string, Profile>, input: unknown): RolloutRequest {
  const o = (typeof input === 'object' && input !== null ? input : {}) as Record<string, unknown>;
  const refuse = (m: string, hint?: string) => new PulseError('refused', `rollout refused: ${m}`, hint ? { hint } : {});
  if ((o['action'] !== 'up' && o['action'] !== 'down') || o['version'] !== 1) throw refuse('not a rollout request of version 1');
  const nodes = o['nodes'];
  if (!Array.isArray(nodes) || nodes.length === 0 || !nodes.every(isName)) throw refuse('nodes is not a list of node names');
  const dup = nodes.find((n, i) => nodes.indexOf(n) !== i);
  if (dup !== undefined) throw refuse(`node ${dup} is named twice`);
  const unknown = nodes.filter((n) => !Object.hasOwn(config.nodes, n));
  if (unknown.length > 0) throw refuse(`${unknown.join(', ')} not in ${config.file}`, `its nodes: ${Object.keys(config.nodes).join(', ')}`);
  const profile = o['profile'];
  if (o['action'] === 'up' ? !isName(profile) || !profiles.has(profile) : profile !== null) {
    throw refuse(`profile ${JSON.stringify(profile)} is not one of the profiles`, `profiles: ${[...profiles.keys()].join(', ')}`);
  }
  for (const k of ['confirmed', 'experimental', 'restart', 'autoRollback', 'allowOutage', 'verbose']) if (!isBool(o[k])) throw refuse(`${k} is not true or false`);
  const par = o['maxParallel'];
  if (typeof par !== 'number' || !Number.isInteger(par) || par < 1 || par > 64) throw refuse('maxParallel is not a whole number from 1 to 64');
  if (!isBudget(o['timeoutS']) || !(o['minMemGib'] === null || (typeof o['minMemGib'] === 'number' && o['minMemGib'] >= 0 && o['minMemGib'] <= 4096))) {
    throw refuse('timeoutS or minMemGib is not a number in range');
  }
  const req = o as unknown as RolloutRequest;
  const prot = protectedOf(config, req.nodes);
  if (prot.length > 0 && !req.confirmed) throw refuse(`${prot.join(', ')} ${prot.length > 1 ? 'are' : 'is'} protected; add --yes (once, for the whole rollout)`);
  return req;
}

/** One node's plan, made as `pulse model up <profile> --node <node>` (or down) would make it now. */
export function nodePlanOf(config: NodesConfig, profiles: ReadonlyMap<string, Profile>, req: RolloutRequest, node: string, state: NodeState | null, now: Date): UpPlan | DownPlan {
  if (req.action === 'down') return downPlanFor(config, { node, yes: req.confirmed }, now);
  return upPlanFor(config, profiles, {
    profile: req.profile ?? '', node, overlay: null, overlayWins: false, yes: req.confirmed, experimental: req.experimental,
    restart: req.restart, timeoutS: req.timeoutS ?? undefined, minMemGib: req.minMemGib ?? undefined, autoRollback: req.autoRollback,
  }, state, now);
}

/** An endpoint that really serves: enabled, and not only kept enabled by the all-disabled fallback. */
export function servingEndpoint(e: GatewayEndpoint): boolean {
  return e.enabled && !(e.reason ?? '').startsWith('kept enabled by the fallback');
}

/**
 * The guard: which endpoints still serve while `stepNodes` go down, and a refusal when the step takes away the last
 * one that serves (unless allowOutage). `notServing` are the nodes that count as down whatever the file says: a
 * deploy of theirs runs (its workflow is open), another rollout's step reserved them, or the watchdog judged them
 * down. A step whose nodes serve nothing now cannot cause an outage: it is never refused (a fleet where nothing
 * serves yet can be rolled out).
 */
export function guardVerdict(endpoints: GatewayEndpoint[], stepNodes: string[], allowOutage: boolean, notServing: ReadonlySet<string> = new Set()): GuardVerdict {
  const serves = (e: GatewayEndpoint): boolean => servingEndpoint(e) && !notServing.has(e.name);
  const serving = endpoints.filter((e) => serves(e) && !stepNodes.includes(e.name)).map((e) => e.name);
  const takes = endpoints.filter((e) => serves(e) && stepNodes.includes(e.name)).map((e) => e.name);
  const refused = serving.length === 0 && takes.length > 0 && !allowOutage
    ? `taking ${takes.join(', ')} down would leave the model with no enabled endpoint that serves (${takes.length > 1 ? 'they are' : 'it is'} the last); add --allow-outage to accept that`
    : null;
  return { serving, refused };
}

/**
 * A rollout step's reservation of its nodes (the guard writes it under the state lock before it admits the step):
 * until the node's own deploy that the step starts has ended, the node counts as not serving for every other
 * rollout's guard, so two guards can never each count the other's node. `deployRunId` is the run of the node's
 * deploy workflow (`pulse-model-<node>`) that was the latest when the reservation was made (null: none ever ran):
 * once a later run of it has closed, the reservation is spent. A reservation whose rollout has closed is stale.
 */
export interface Reservation {
  node: string;
  /** The rollout run that reserved it. */
  owner: { workflowId: string; runId: string };
  deployRunId: string | null;
  at: string;
}

/** The reservations file of the state dir (the state queue's worker is its only writer). */
export function reservationsPath(stateDir: string): string {
  return path.join(stateDir, 'rollout-reservations.json');
}

const isReservation = (r: unknown): r is Reservation => {
  const o = (typeof r === 'object' && r !== null ? r : {}) as Record<string, unknown>;
  const owner = (typeof o['owner'] === 'object' && o['owner'] !== null ? o['owner'] : {}) as Record<string, unknown>;
  return typeof o['node'] === 'string' && typeof owner['workflowId'] === 'string' && typeof owner['runId'] === 'string'
    && (o['deployRunId'] === null || typeof o['deployRunId'] === 'string') && typeof o['at'] === 'string';
};

/** The reservations in the file (a damaged file holds none: the open-deploy check still covers a running deploy). */
export function parseReservations(text: string | null): Reservation[] {
  if (text === null) return [];
  try {
    const v = JSON.parse(text) as { reservations?: unknown };
    return Array.isArray(v.reservations) ? v.reservations.filter(isReservation) : [];
  } catch {
    return [];
  }
}

/** How a node's deploy workflow stands: its latest run and whether that run is still open (null: it never ran). */
export interface DeployRun {
  runId: string;
  running: boolean;
}

/**
 * Whether a reservation still holds: its rollout is open (ownerOpen) and the node's deploy it admitted has not ended
 * (no run of the node's workflow other than the one seen at reservation time has closed).
 */
export function reservationHolds(r: Reservation, ownerOpen: boolean, deploy: DeployRun | null): boolean {
  if (!ownerOpen) return false;
  if (deploy === null || deploy.runId === r.deployRunId) return true; // the step's deploy has not started yet
  return deploy.running;
}

/** The endpoints of the gateway backend file in `stateDir`; when none was written yet (or it is damaged), the ones it would hold now. */
export function gatewayEndpoints(stateDir: string, fleet: FleetEntry[]): GatewayEndpoint[] {
  const text = readFileOrNull(fragmentPath(stateDir));
  if (text !== null) {
    try {
      const eps = (JSON.parse(text) as GatewayFragment).models[0].endpoints;
      if (Array.isArray(eps)) return eps;
    } catch {
      // damaged: what it would say
    }
  }
  const { states, damaged } = scanNodeStates(stateDir);
  const tunnel = fleet.some((e) => e.tunnel) ? readTunnelHealth(stateDir) : NO_TUNNEL;
  return buildFragment(fleet, states, damaged, tunnel).fragment.models[0].endpoints;
}

/** How long the guard waits for a tunnel's next probe (pulse tunnel probes every 5 s by default, each within 5 s). */
export const TUNNEL_PROBE_WAIT_MS = 15_000;

/**
 * The tunnelled endpoints outside the step that the file shows disabled only for want of a probe through the tunnel
 * since the node came up: the node state is up and the link connected, so the tunnel's next probe (every 5 s by
 * default) enables them. Right after a gate passed on such a node (spark2) its endpoint is still disabled by the
 * probe that failed while it restarted; the guard waits for that probe rather than refuse the next step.
 */
export function awaitingTunnelProbe(stateDir: string, fleet: FleetEntry[], endpoints: GatewayEndpoint[], stepNodes: string[]): string[] {
  const { states, damaged } = scanNodeStates(stateDir);
  const view = readTunnelHealth(stateDir);
  const h = view.health;
  if (!h || !view.running) return [];
  return fleet.filter((e) => {
    const n = h.nodes[e.node];
    const shown = endpoints.find((x) => x.name === e.node);
    if (!e.tunnel || !n?.connected || !shown || shown.enabled || stepNodes.includes(e.node) || states[e.node]?.state !== 'up') return false;
    const answered = { ...view, health: { ...h, nodes: { ...h.nodes, [e.node]: { ...n, probe: { ok: true, at: '', detail: '' } } } } };
    return disableReason(e, states[e.node] ?? null, damaged[e.node] ?? null, answered) === null;
  }).map((e) => e.node);
}

/** One step of the plan the dry-run shows: its nodes, who serves while they go, and the guard's word. */
export interface PlannedStep {
  nodes: string[];
  serving: string[];
  refused: string | null;
}

/**
 * The steps as the rollout would take them from the file's endpoints now, if every gate passes: a node that came up
 * serves again when the gateway can reach it (fleetOf), one that went down no longer serves.
 */
export function plannedSteps(
  config: NodesConfig, endpoints: GatewayEndpoint[], req: Pick<RolloutRequest, 'action' | 'nodes' | 'maxParallel' | 'allowOutage'>,
  notServing: ReadonlySet<string> = new Set(),
): PlannedStep[] {
  const reach = new Map(fleetOf(config).map((e) => [e.node, e.reachable || e.tunnel !== undefined]));
  let now = endpoints.map((e) => ({ ...e }));
  const down = new Set(notServing);
  const out: PlannedStep[] = [];
  for (let i = 0; i < req.nodes.length; i += req.maxParallel) {
    const nodes = req.nodes.slice(i, i + req.maxParallel);
    const g = guardVerdict(now, nodes, req.allowOutage, down);
    out.push({ nodes, ...g });
    if (g.refused) break;
    for (const n of nodes) down.delete(n);
    now = now.map((e) => (nodes.includes(e.name) ? { name: e.name, baseUrl: e.baseUrl, enabled: req.action === 'up' && reach.get(e.name) === true } : e));
  }
  return out;
}

/** The nodes the state dir shows down whatever the gateway file says: the watchdog's last verdict on them is down. */
export function watchdogDown(stateDir: string): Set<string> {
  const { states } = scanNodeStates(stateDir);
  return new Set(Object.entries(states).filter(([, s]) => s.watchdog?.judged === 'down' && s.watchdog.verdict === 'down').map(([n]) => n));
}

/**
 * A plain `up`/`down` on `node` is not refused by the guard (only a rollout step is), but when the node is the last
 * endpoint that serves, the plan and the screen say so: this line, or null when another endpoint serves meanwhile.
 * `idle`: the nodes asked (runtime/fleet/serving.ts) that serve nothing now; a node that serves nothing takes no
 * endpoint away, as the rollout's guard counts it (the dry-run asks no node: it has the file's word only).
 */
export function lastEndpointWarning(config: NodesConfig, stateDir: string, node: string, action: 'up' | 'down', idle: ReadonlySet<string> = new Set()): string | null {
  const endpoints = gatewayEndpoints(stateDir, fleetOf(config));
  const v = guardVerdict(endpoints, [node], false, new Set([...watchdogDown(stateDir), ...idle]));
  if (v.refused === null) return null;
  const what = action === 'up' ? 'while this up restarts its server' : 'after this down';
  return `${node} is the last endpoint that serves the model in the gateway backend file: ${what} the model has none (a rollout would refuse this step without --allow-outage)`;
}
