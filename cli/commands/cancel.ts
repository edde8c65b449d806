/**
 * `pulse model cancel --node <node>`: request cancellation of the deploy that holds the node. The workflow then
 * compensates (node failed, endpoint disabled) in a non-cancellable scope; `watch` shows it finish.
 */
import type { NodeOnlyOptions } from '../options.js';
import { PulseError } from '../../runtime/errors.js';
import { connectTemporal, uiLink } from '../temporal.js';
import { runningDeploy } from './watch.js';
import { workerPolls } from './worker.js';

export async function run(opts: NodeOnlyOptions): Promise<number> {
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
