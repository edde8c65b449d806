/**
 * `pulse model up <profile> --node a,b|--all` and `down` likewise (issue 15): a rollout. The CLI checks what it
 * can before any connection (nodes, profile, the one --yes for protected nodes, each node's plan and refusals),
 * then starts rolloutWorkflow with only names and flags (the worker plans each node itself) and follows each child
 * as it runs, one after the other, then prints the node outcomes. --dry-run prints the plan instead.
 */
import { loadInputs } from '../../runtime/config/index.js';
import { PulseError } from '../../runtime/errors.js';
import { FAILURES } from '../../runtime/failures.js';
import { checkRolloutRequest, gatewayEndpoints, nodePlanOf, plannedSteps, protectedOf, rolloutIdFor, rolloutOrder, servingEndpoint, watchdogDown } from '../../runtime/fleet/rollout.js';
import type { NodesConfig } from '../../runtime/config/nodes.js';
import { trustedStateDir, readNodeState } from '../../runtime/state/state.js';
import { fleetOf } from '../../runtime/plan/plan.js';
import type { RolloutRequest } from '../../runtime/model/index.js';
import type { RolloutOptions } from '../rollout-flags.js';
import { rolloutPlanText, type RolloutPlanView } from '../rollout-view.js';

/** The request and what the dry-run and the start need beside it; every refusal comes here, before Temporal. */
async function prepare(opts: RolloutOptions): Promise<{ request: RolloutRequest; view: Omit<RolloutPlanView, 'diffs'>; config: NodesConfig }> {
  const { config, profiles } = loadInputs({ nodes: opts.nodes });
  const request: RolloutRequest = {
    action: opts.action, version: 1, profile: opts.profile, nodes: rolloutOrder(config, opts.targets), confirmed: opts.yes,
    experimental: opts.experimental, restart: opts.restart, autoRollback: opts.autoRollback, allowOutage: opts.allowOutage,
    maxParallel: opts.maxParallel, timeoutS: opts.timeoutS, minMemGib: opts.minMemGib, verbose: opts.verbose,
    ...(opts.drainS !== null ? { drainS: opts.drainS } : {}),
  };
  const protectedNodes = protectedOf(config, request.nodes);
  // The dry-run shows a protected node without --yes (it says so); a real rollout is refused here and by the worker.
  checkRolloutRequest(config, profiles, opts.dryRun ? { ...request, confirmed: true } : request);
  const now = new Date(Math.floor(Date.now() / 1000) * 1000);
  for (const n of request.nodes) nodePlanOf(config, profiles, { ...request, confirmed: request.confirmed || opts.dryRun }, n, await readNodeState(trustedStateDir(), n), now);
  const steps = plannedSteps(config, gatewayEndpoints(trustedStateDir(), fleetOf(config)), request, watchdogDown(trustedStateDir()));
  return { request, view: { request, workflowId: rolloutIdFor(request.nodes), protectedNodes, steps }, config };
}

/**
 * The dry-run's "serving meanwhile" counts an endpoint only when its node can take traffic now (issue 30 item 2): each
 * node the gateway file enables is asked as `status` asks it (read-only; /v1/models and /health, no HTTP to a
 * protected node without --yes), and one whose health word cannot take traffic (verdict.ts TAKES_TRAFFIC: stopped,
 * failing, failed, down, deploying, unreachable) joins the guard's notServing for that list. The guard's word on each
 * step stays the one the rollout's own guard will give (it reads the file, open deploys and the watchdog, and asks no
 * node), so the plan never promises a step the rollout then refuses. Returns the plan and why each enabled node is
 * not counted.
 */
async function plannedFromHealth(config: NodesConfig, view: Omit<RolloutPlanView, 'diffs'>, yes: boolean): Promise<Omit<RolloutPlanView, 'diffs'>> {
  const stateDir = trustedStateDir();
  const endpoints = gatewayEndpoints(stateDir, fleetOf(config));
  const asked = endpoints.filter(servingEndpoint).map((e) => e.name).filter((n) => Object.hasOwn(config.nodes, n));
  const { openSession } = await import('../../runtime/node/connect.js');
  const { statusOfNode } = await import('../../runtime/status/collect.js');
  const { verdictOf, notServingOf } = await import('../../runtime/status/verdict.js');
  const { healthCell } = await import('../../runtime/status/glance.js');
  const nodes = await Promise.all(asked.map(async (node) => {
    const st = await statusOfNode(config, node, { node, http: true, gpuProbe: false, yes, healthRoute: true }, { open: openSession, stateDir });
    return Object.assign(st, verdictOf(st));
  }));
  const down = notServingOf(nodes);
  const notCounted = Object.fromEntries(nodes.filter((n) => down.has(n.node)).map((n) => [n.node, `enabled in the gateway file, but ${healthCell(n)}`]));
  const healthy = plannedSteps(config, endpoints, { ...view.request, allowOutage: true }, new Set([...watchdogDown(stateDir), ...down.keys()]));
  const steps = view.steps.map((step, i) => ({ ...step, serving: healthy[i]?.serving ?? [] }));
  return { ...view, steps, notCounted };
}

async function dryRun(opts: RolloutOptions, config: NodesConfig, planned: Omit<RolloutPlanView, 'diffs'>): Promise<number> {
  const view = await plannedFromHealth(config, planned, opts.yes);
  const diffs: RolloutPlanView['diffs'] = {};
  if (opts.action === 'up') {
    const { diffReport } = await import('../diff-report.js');
    await Promise.all(view.request.nodes.map(async (node) => {
      diffs[node] = await diffReport({ ...opts, profile: opts.profile ?? '', node, overlay: undefined, overlayWins: false, nodes: opts.nodes })
        .catch((e: unknown) => ({ error: e instanceof Error ? e.message : String(e) }));
    }));
  }
  const full = { ...view, diffs };
  process.stdout.write(opts.json ? `${JSON.stringify(full, null, 2)}\n` : rolloutPlanText(full));
  return view.steps.some((s) => s.refused) ? FAILURES.refused.exit : 0;
}

export async function run(opts: RolloutOptions): Promise<number> {
  if (opts.action === 'up' && !opts.profile) throw new PulseError('usage', 'a rollout up needs a profile');
  const { request, view, config } = await prepare(opts);
  if (opts.dryRun) return dryRun(opts, config, view);
  const { startRollout, followRollout } = await import('../rollout-follow.js');
  const { connectTemporal } = await import('../deploy-client/temporal.js');
  const t = await connectTemporal(opts);
  try {
    const ref = await startRollout(t, request, view.workflowId);
    return await followRollout(t, ref, { json: opts.json, quiet: opts.quiet, verbose: opts.verbose, nodes: opts.nodes, detach: opts.detach });
  } finally {
    await t.close();
  }
}
