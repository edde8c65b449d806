/**
 * `pulse model up <profile> --node <node>`: build the plan (the same one the dry-run prints), refuse what the spec
 * refuses, then hand it to the deploy client, which starts upWorkflow under the node's workflow ID (the per-node
 * lock) and follows it live into the view (cli/deploy-view.ts).
 */
import type { UpOptions } from '../options.js';
import type { UpPlan } from '../../runtime/model/index.js';
import { rollbackHintOf } from '../../runtime/rollout.js';
import { runDeploy } from '../deploy-client/index.js';
import { deployView } from '../deploy-view.js';

export { rollbackHintOf } from '../../runtime/rollout.js';

async function buildPlan(opts: UpOptions): Promise<UpPlan> {
  const { loadNodesConfig } = await import('../../runtime/config/nodes.js');
  const { loadProfiles, profileOf } = await import('../../runtime/config/profiles.js');
  const { readOverlay } = await import('../../runtime/config/overlay.js');
  const { resolveNodesPath } = await import('../../runtime/paths.js');
  const { buildUpPlan, checkRefusals } = await import('../../runtime/plan.js');
  const { defaultStateDir, readNodeState } = await import('../../runtime/state.js');
  const config = loadNodesConfig(resolveNodesPath(opts.nodes));
  const profiles = loadProfiles();
  const overlay = opts.overlay ? readOverlay(opts.overlay) : null;
  const { protectedBackup } = await import('../../runtime/last-good.js');
  const state = await readNodeState(defaultStateDir(), opts.node);
  // The backup last known good points to is never pruned (runtime/last-good.ts).
  const base = { protectBackup: protectedBackup(state), profile: opts.profile, node: opts.node, overlay, overlayWins: opts.overlayWins, yes: opts.yes, experimental: opts.experimental, restart: opts.restart, timeoutS: opts.timeoutS, minMemGib: opts.minMemGib };
  const draft = buildUpPlan(config, profiles, base, new Date());
  checkRefusals(draft, profileOf(profiles, opts.profile), { experimental: opts.experimental, dryRun: false });
  const autoRollback = opts.autoRollback || config.nodes[opts.node]?.autoRollback === true;
  return { ...draft, rollbackHint: rollbackHintOf(state, opts.node, draft.protected), ...(autoRollback ? { autoRollback } : {}) };
}

export async function run(opts: UpOptions): Promise<number> {
  const plan = await buildPlan(opts); // config errors and refusals come before any Temporal connection
  return runDeploy(plan, opts, deployView(opts));
}
