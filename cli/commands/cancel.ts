/**
 * `pulse model cancel --node <node> [--wait]`: request cancellation of the deploy that holds the node. The workflow
 * then stops the server it had started (if its start began) and compensates (node failed, endpoint disabled) in a
 * non-cancellable scope; `--wait` (or `watch`) shows it finish (on a rollout: the rollout and its current node). That changes the
 * live node's state and gateway endpoint, so a protected node needs --yes, like up and down.
 */
import type { CancelOptions } from '../options.js';
import { PulseError } from '../../runtime/errors.js';
import { cancelDeploy, runningDeploy, workerPolls, type DeployRef } from '../deploy-client/index.js';
import { connectTemporal, uiLink } from '../deploy-client/temporal.js';

/**
 * An unknown node is a config error (as in every command), before any Temporal connection; a protected node is
 * refused without --yes once there is a deploy to cancel on it (asking for --yes and then finding nothing to cancel
 * sent the operator round twice), and so is a node whose nodes.json cannot be read (it cannot vouch for it).
 */
async function protectedRefusal(opts: CancelOptions): Promise<PulseError | null> {
  const { loadNodesConfig, nodeOf } = await import('../../runtime/config/nodes.js');
  const { resolveNodesPath } = await import('../../runtime/state/paths.js');
  let config;
  try {
    config = loadNodesConfig(resolveNodesPath(opts.nodes));
  } catch (e) {
    if (opts.yes) return null;
    return new PulseError('refused', `cannot tell whether ${opts.node} is protected (${(e as Error).message}); add --yes to cancel the deploy on it`);
  }
  const isProtected = nodeOf(config, opts.node).protected; // an unknown node throws here, before any connection
  if (!isProtected || opts.yes) return null;
  return new PulseError('refused', `node ${opts.node} is protected; add --yes to cancel the deploy on it`, {
    hint: 'the cancelled deploy marks the node failed and disables its gateway endpoint once its stop step has begun',
  });
}

/** --now on a rollout cancels whichever of its nodes runs: a protected one among them needs --yes. */
async function refuseProtectedIn(opts: CancelOptions, workflowId: string): Promise<void> {
  const { loadInputs } = await import('../../runtime/config/index.js');
  const { protectedOf } = await import('../../runtime/fleet/rollout.js');
  const nodes = workflowId.replace(/^pulse-rollout-/, '').split('+');
  const prot = protectedOf(loadInputs({ nodes: opts.nodes }).config, nodes);
  if (prot.length > 0) throw new PulseError('refused', `the rollout includes protected ${prot.join(', ')}; add --yes to cancel it at once (--now)`);
}

/** What a cancel did: the run it asked to stop, its UI page, and whether a worker will carry the cancel out. */
export interface CancelReport {
  node: string;
  deploy: DeployRef;
  ui: string | null;
  workerServes: boolean;
  /** A rollout: stopped after its current node, or cancelled at once (--now). */
  rollout?: 'after' | 'now';
}

export function cancelText(r: CancelReport): string {
  if (r.rollout) {
    return [
      r.rollout === 'now'
        ? `cancel requested: ${r.deploy.what} (workflow ${r.deploy.workflowId}): the node that runs is cancelled too and compensates; no later node starts`
        : `stop requested: ${r.deploy.what} (workflow ${r.deploy.workflowId}) starts no node after the current one (add --now to cancel that one too)`,
      `follow it: pulse model watch --node ${r.node}`,
      ...(r.ui ? [`Temporal UI: ${r.ui}`] : []),
    ].join('\n') + '\n';
  }
  const lines = [
    `cancel requested: ${r.deploy.what} (workflow ${r.deploy.workflowId}, run ${r.deploy.runId})`,
    'the deploy now stops its step; if its start had begun it stops that server, and if its stop step had begun it marks the node failed and disables its endpoint',
    `follow it: pulse model watch --node ${r.node}`,
  ];
  if (r.ui) lines.push(`Temporal UI: ${r.ui}`);
  if (!r.workerServes) lines.push('no pulse worker serves the pulse task queues: the cancel takes effect when `pulse worker` or `pulse model watch` runs');
  return lines.join('\n') + '\n';
}

/** Nothing runs on the node: not an error (the deploy the operator wanted gone is gone); this line says so. */
function nothingText(node: string): string {
  return `nothing to cancel: no deploy runs on ${node}\nsee past deploys with: pulse model history --node ${node}\n`;
}

async function cancelOn(opts: CancelOptions): Promise<CancelReport | null> {
  const refusal = await protectedRefusal(opts);
  const t = await connectTemporal(opts);
  try {
    const { runningRolloutWith, stopRollout, cancelRollout } = await import('../rollout-client.js');
    const rollout = await runningRolloutWith(t, opts.node);
    if (rollout) {
      if (refusal) throw refusal;
      if (opts.now === true && !opts.yes) await refuseProtectedIn(opts, rollout.workflowId);
      await (opts.now === true ? cancelRollout(t, rollout) : stopRollout(t, rollout));
      return { node: opts.node, deploy: rollout, ui: uiLink(t.target, rollout.workflowId, rollout.runId), workerServes: await workerPolls(t), rollout: opts.now === true ? 'now' : 'after' };
    }
    const held = await runningDeploy(t, opts.node);
    if (!held) return null;
    if (refusal) throw refusal;
    await cancelDeploy(t, held);
    return { node: opts.node, deploy: held, ui: uiLink(t.target, held.workflowId, held.runId), workerServes: await workerPolls(t) };
  } finally {
    await t.close();
  }
}

/**
 * --wait: follow the cancelled deploy to its end (quietly: its failed steps and how it ended, with the failure block),
 * running a worker here if none serves, so the compensation really runs. Exit 0 when it ended cancelled, else the
 * deploy's own exit code (it finished, or failed, before the cancel reached it).
 */
async function waitForEnd(opts: CancelOptions, r: CancelReport): Promise<number> {
  const { followWith } = await import('../deploy-client/index.js');
  const { deployView } = await import('../deploy-view.js');
  const { FAILURES } = await import('../../runtime/failures.js');
  const t = await connectTemporal(opts);
  try {
    const view = deployView({ node: opts.node, json: opts.json, verbose: opts.verbose, quiet: true, nodes: opts.nodes });
    const code = await followWith(t, r.deploy, { verbose: opts.verbose, nodes: opts.nodes, closed: false }, view);
    return code === FAILURES.cancelled.exit ? 0 : code;
  } finally {
    await t.close();
  }
}

/**
 * --wait on a rollout: follow it (quietly) until it has ended and so has each child it ran, the current one included:
 * after a stop that node finishes and passes its gate, after --now it compensates. The closing table says how each
 * node ended. Exit 0 when the rollout ended as asked (stopped, cancelled, or it had already reached its last node
 * and succeeded), else the rollout's own exit code (e.g. the current node's gate failed).
 */
async function waitForRollout(opts: CancelOptions, r: CancelReport): Promise<number> {
  const { followRollout } = await import('../rollout-follow.js');
  const { FAILURES } = await import('../../runtime/failures.js');
  const t = await connectTemporal(opts);
  try {
    const code = await followRollout(t, r.deploy, { json: opts.json, quiet: true, verbose: opts.verbose, nodes: opts.nodes, detach: false });
    return code === FAILURES.cancelled.exit ? 0 : code;
  } finally {
    await t.close();
  }
}

export async function run(opts: CancelOptions): Promise<number> {
  const report = await cancelOn(opts);
  if (report === null) {
    process.stdout.write(nothingText(opts.node));
    return 0;
  }
  if (!opts.json || !opts.wait) process.stdout.write(cancelText(report));
  if (!opts.wait) return 0;
  return report.rollout ? waitForRollout(opts, report) : waitForEnd(opts, report);
}
