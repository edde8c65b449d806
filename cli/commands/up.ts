/**
 * `pulse model up <profile> --node <node>`: build the plan (the same one the dry-run prints), refuse what the spec
 * refuses, then hand it to the deploy client, which starts upWorkflow under the node's workflow ID (the per-node
 * lock) and follows it live into the view (cli/deploy-view.ts).
 */
import type { UpOptions } from '../options.js';
import type { UpPlan } from '../../runtime/model/index.js';
import { runDeploy } from '../deploy-client/index.js';
import { outageWarning } from '../outage-warning.js';
import { deployView } from '../deploy-view.js';

export { rollbackHintOf } from '../../runtime/plan/plan.js';

/** The plan from the command's inputs: nodes.json, the profiles, the overlay and the node's state (runtime/plan/plan.ts upPlanFor). */
async function buildPlan(opts: UpOptions): Promise<UpPlan> {
  const { loadNodesConfig } = await import('../../runtime/config/nodes.js');
  const { loadProfiles } = await import('../../runtime/config/profiles.js');
  const { readOverlay } = await import('../../runtime/config/overlay.js');
  const { resolveNodesPath } = await import('../../runtime/state/paths.js');
  const { upPlanFor } = await import('../../runtime/plan/plan.js');
  const { trustedStateDir, readNodeState } = await import('../../runtime/state/state.js');
  const config = loadNodesConfig(resolveNodesPath(opts.nodes));
  const profiles = loadProfiles();
  const overlay = opts.overlay ? readOverlay(opts.overlay) : null;
  const state = await readNodeState(trustedStateDir(), opts.node);
  const { profile, node, overlayWins, yes, experimental, restart, timeoutS, minMemGib, autoRollback } = opts;
  return upPlanFor(config, profiles, { profile, node, overlay, overlayWins, yes, experimental, restart, timeoutS, minMemGib, autoRollback }, state, new Date());
}

export async function run(opts: UpOptions): Promise<number> {
  const plan = await buildPlan(opts); // config errors and refusals come before any Temporal connection
  const warning = await outageWarning(opts, 'up');
  if (warning) (opts.json ? process.stderr : process.stdout).write(`warning: ${warning}\n`);
  return runDeploy(plan, opts, deployView(opts));
}
