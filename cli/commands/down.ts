/** `pulse model down --node <node>`: start downWorkflow under the node's workflow ID and follow it live. */
import type { DownOptions } from '../options.js';
import type { DownPlan } from '../../runtime/model/index.js';
import { connectTemporal } from '../deploy-client/temporal.js';
import { stateDiskFull } from '../deploy-client/index.js';
import { startAndShow } from '../deploy-view.js';

async function buildPlan(opts: DownOptions): Promise<DownPlan> {
  const { loadNodesConfig } = await import('../../runtime/config/nodes.js');
  const { resolveNodesPath } = await import('../../runtime/paths.js');
  const { buildDownPlan, checkRefusals } = await import('../../runtime/plan.js');
  const config = loadNodesConfig(resolveNodesPath(opts.nodes));
  const plan = buildDownPlan(config, { node: opts.node, yes: opts.yes }, new Date());
  checkRefusals(plan, null, { experimental: false, dryRun: false });
  return plan;
}

export async function run(opts: DownOptions): Promise<number> {
  const plan = await buildPlan(opts);
  const full = await stateDiskFull(`down on ${plan.node}`);
  if (full) throw full;
  const t = await connectTemporal(opts);
  try {
    return await startAndShow(t, plan, `down on ${plan.node}`, opts);
  } finally {
    await t.close();
  }
}
