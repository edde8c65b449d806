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
import { trustedStateDir, readNodeState } from '../../runtime/state/state.js';
import { fleetOf } from '../../runtime/plan/plan.js';
import type { RolloutRequest } from '../../runtime/model/index.js';
import type { RolloutOptions } from '../rollout-flags.js';
import { rolloutPlanText, type RolloutPlanView } from '../rollout-view.js';

/** The request and what the dry-run and the start need beside it; every refusal comes here, before Temporal. */
async function prepare(opts: RolloutOptions): Promise<{ request: RolloutRequest; view: Omit<RolloutPlanView, 'diffs'> }> {
  const { config, profiles } = loadInputs({ nodes: opts.nodes });
  const request: RolloutRequest = {
    action: opts.action, version: 1, profile: opts.profile, nodes: rolloutOrder(config, opts.targets), confirmed: opts.yes,
    experimental: opts.experimental, restart: opts.restart, autoRollback: opts.autoRollback, allowOutage: opts.allowOutage,
    maxParallel: opts.maxParallel, timeoutS: opts.timeoutS, minMemGib: opts.minMemGib, verbose: opts.verbose,
  };
  const protectedNodes = protectedOf(config, request.nodes);
  // The dry-run shows a protected node without --yes (it says so); a real rollout is refused here and by the worker.
  checkRolloutRequest(config, profiles, opts.dryRun ? { ...request, confirmed: true } : request);
  const now = new Date(Math.floor(Date.now() / 1000) * 1000);
  for (const n of request.nodes) nodePlanOf(config, profiles, { ...request, confirmed: request.confirmed || opts.dryRun }, n, await readNodeState(trustedStateDir(), n), now);
  const steps = plannedSteps(config, gatewayEndpoints(trustedStateDir(), fleetOf(config)), request, watchdogDown(trustedStateDir()));
  return { request, view: { request, workflowId: rolloutIdFor(request.nodes), protectedNodes, steps } };
}

async function dryRun(opts: RolloutOptions, view: Omit<RolloutPlanView, 'diffs'>): Promise<number> {
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
  const { request, view } = await prepare(opts);
  if (opts.dryRun) return dryRun(opts, view);
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
