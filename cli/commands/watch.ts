/** `pulse model watch --node <node>`: follow the deploy that holds the node (or show how the last one ended). */
import { PulseError } from '../../runtime/errors.js';
import { followWith, latestDeploy } from '../deploy-client/index.js';
import { deployView } from '../deploy-view.js';
import type { WatchOptions } from '../options.js';
import { connectTemporal } from '../deploy-client/temporal.js';
import { knownNode } from '../known-node.js';

export async function run(opts: WatchOptions): Promise<number> {
  knownNode(opts.nodes, opts.node);
  const t = await connectTemporal(opts);
  try {
    const { runningRolloutWith } = await import('../rollout-client.js');
    const rollout = await runningRolloutWith(t, opts.node);
    if (rollout) {
      const { followRollout } = await import('../rollout-follow.js');
      return await followRollout(t, rollout, { json: opts.json, quiet: opts.quiet, verbose: opts.verbose, nodes: opts.nodes, detach: false, timeoutS: opts.timeoutS });
    }
    const last = await latestDeploy(t, opts.node);
    if (!last) {
      throw new PulseError('usage', `no deploy has run on ${opts.node}`, { hint: `start one with: pulse model up <profile> --node ${opts.node}` });
    }
    // A deploy that ended while nobody watched (e.g. after a detach): show how it went, with its exit code.
    // (--json: on stderr, so stdout is only the JSON.)
    if (!last.running) (opts.json ? process.stderr : process.stdout).write(`no deploy runs on ${opts.node} now; the last one has ended:\n`);
    return await followWith(t, last, { verbose: opts.verbose, nodes: opts.nodes, closed: !last.running, followTimeoutS: opts.timeoutS }, deployView(opts));
  } finally {
    await t.close();
  }
}
