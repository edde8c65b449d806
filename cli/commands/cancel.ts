/**
 * `pulse model cancel --node <node>`: request cancellation of the deploy that holds the node. The workflow then
 * compensates (node failed, endpoint disabled) in a non-cancellable scope; `watch` shows it finish. That changes the
 * live node's state and gateway endpoint, so a protected node needs --yes, like up and down.
 */
import type { CancelOptions } from '../options.js';
import { PulseError } from '../../runtime/errors.js';
import { connectTemporal, uiLink } from '../temporal.js';
import { runningDeploy } from './watch.js';
import { workerPolls } from './worker.js';

/** Refuses a protected node without --yes, before any Temporal connection; a node nodes.json cannot vouch for too. */
async function refuseProtected(opts: CancelOptions): Promise<void> {
  if (opts.yes) return;
  const { loadNodesConfig } = await import('../../runtime/config/nodes.js');
  const { resolveNodesPath } = await import('../../runtime/paths.js');
  let isProtected: boolean;
  try {
    const config = loadNodesConfig(resolveNodesPath(opts.nodes));
    if (!Object.hasOwn(config.nodes, opts.node)) throw new Error(`${config.file} has no node ${opts.node}`);
    isProtected = config.nodes[opts.node]?.protected ?? true;
  } catch (e) {
    throw new PulseError('refused', `cannot tell whether ${opts.node} is protected (${(e as Error).message}); add --yes to cancel the deploy on it`);
  }
  if (isProtected) {
    throw new PulseError('refused', `node ${opts.node} is protected; add --yes to cancel the deploy on it`, {
      hint: 'the cancelled deploy marks the node failed and disables its gateway endpoint once its stop step has begun',
    });
  }
}

export async function run(opts: CancelOptions): Promise<number> {
  await refuseProtected(opts);
  const t = await connectTemporal(opts);
  try {
    const held = await runningDeploy(t, opts.node);
    if (!held) {
      throw new PulseError('usage', `nothing to cancel: no deploy runs on ${opts.node}`, { hint: `see past deploys with: pulse model history --node ${opts.node}` });
    }
    await t.client.workflow.getHandle(held.workflowId, held.runId).cancel();
    const link = uiLink(t.target, held.workflowId, held.runId);
    const lines = [
      `cancel requested: ${held.what} (workflow ${held.workflowId}, run ${held.runId})`,
      'the deploy now stops its step and, if it had begun the stop step, marks the node failed and disables its endpoint',
      `follow it: pulse model watch --node ${opts.node}`,
    ];
    if (link) lines.push(`Temporal UI: ${link}`);
    if (!(await workerPolls(t))) lines.push('no pulse worker serves the pulse task queues: the cancel takes effect when `pulse worker` or `pulse model watch` runs');
    process.stdout.write(lines.join('\n') + '\n');
    return 0;
  } finally {
    await t.close();
  }
}
