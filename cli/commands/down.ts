/** `pulse model down --node <node>`: build the plan, then the deploy client starts downWorkflow under the node's workflow ID and follows it live. */
import type { DownOptions } from '../options.js';
import type { DownPlan } from '../../runtime/model/index.js';
import { runDeploy } from '../deploy-client/index.js';
import { deployView } from '../deploy-view.js';

async function buildPlan(opts: DownOptions): Promise<DownPlan> {
  const { loadNodesConfig } = await import('../../runtime/config/nodes.js');
  const { resolveNodesPath } = await import('../../runtime/state/paths.js');
  const { downPlanFor } = await import('../../runtime/plan/plan.js');
  return downPlanFor(loadNodesConfig(resolveNodesPath(opts.nodes)), { node: opts.node, yes: opts.yes }, new Date());
}

export async function run(opts: DownOptions): Promise<number> {
  const plan = await buildPlan(opts);
  // Not guarded (only a rollout step is), but a down of the last endpoint that serves says so first.
  const { outageWarning } = await import('../outage-warning.js');
  const warning = await outageWarning(opts, 'down');
  if (warning) (opts.json ? process.stderr : process.stdout).write(`warning: ${warning}\n`);
  return runDeploy(plan, opts, deployView(opts));
}
