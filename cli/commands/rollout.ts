/**
 * `pulse model up <profile> --node a,b|--all` and `down` likewise (issue 15): a rollout. The CLI checks what it
 * can before any connection (nodes, profile, the one --yes for protected nodes, each node's plan and refusals),
 * then starts rolloutWorkflow with only names and flags (the worker plans each node itself) and follows each child
 * as it runs, one after the other, then prints the node outcomes. --dry-run prints the plan instead.
 */
import { loadInputs } from '../../runtime/config/index.js';
import { PulseError } from '../../runtime/errors.js';
import { FAILURES } from '../../runtime/failures.js';
import { checkRolloutRequest, gatewayEndpoints, nodePlanOf, plannedSteps, protectedOf, rolloutIdFor, rolloutOrder, watchdogDown } from '../../runtime/fleet/rollout.js';
import type { NodesConfig } from '../../runtime/config/nodes.js';
import { trustedStateDir, readNodeState } from '../../runtime/state/state.js';
import { fleetOf } from '../../runtime/plan/plan.js';
import type { RolloutRequest } from '../../runtime/model/index.js';
import type { RolloutOptions } from '../rollout-flags.js';
import { rolloutPlanText, type RolloutPlanView } from '../rollout-view.js';

/** The plan's head, before the steps (they need the nodes asked: only the dry-run asks). */
type PlanHead = Omit<RolloutPlanView, 'diffs' | 'steps'>;

/** The request and what the dry-run and the start need beside it; every refusal comes here, before Temporal. */
async function prepare(opts: RolloutOptions): Promise<{ request: RolloutRequest; view: PlanHead; config: NodesConfig }> {
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
  return { request, view: { request, workflowId: rolloutIdFor(request.nodes), protectedNodes }, config };
}

/**
 * The dry-run's steps, as the rollout's own guard will judge them (runtime/fleet/serving.ts): each node the gateway
 * file enables is asked as `status` asks it (read-only; /v1/models and /health, no HTTP to a protected node without
 * --yes), and one that answers with a health word that cannot take traffic (verdict.ts TAKES_TRAFFIC: stopped,
 * failing, failed, down, deploying) does not count as serving, neither beside a step nor in it: a step whose nodes
 * serve nothing takes nothing away. With the watchdog's down nodes, that is the guard's notServing. Returns the plan
 * and why each enabled node is not counted.
 */
async function plannedFromHealth(config: NodesConfig, view: PlanHead, yes: boolean): Promise<Omit<RolloutPlanView, 'diffs'>> {
  const stateDir = trustedStateDir();
  const endpoints = gatewayEndpoints(stateDir, fleetOf(config));
  const { openSession } = await import('../../runtime/node/connect.js');
  const { idleEndpoints } = await import('../../runtime/fleet/serving.js');
  const down = watchdogDown(stateDir);
  const idle = await idleEndpoints(config, endpoints, yes, { open: openSession, stateDir }, down);
  const notCounted = Object.fromEntries([...idle].map(([n, cell]) => [n, `enabled in the gateway file, but ${cell}`]));
  const steps = plannedSteps(config, endpoints, view.request, new Set([...down, ...idle.keys()]));
  return { ...view, steps, notCounted };
}

async function dryRun(opts: RolloutOptions, config: NodesConfig, planned: PlanHead): Promise<number> {
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
