/**
 * `pulse model up <profile> --node <node>`: build the plan (the same one the dry-run prints), refuse what the spec
 * refuses, start upWorkflow under the node's workflow ID (the per-node lock) and follow it live.
 */
import type { UpOptions } from '../options.js';
import type { DownPlan, NodeState, UpPlan } from '../../workflows/types.js';
import { PulseError } from '../../runtime/errors.js';
import { connectTemporal, serverCause, stateDir, uiLink, type PulseTemporal } from '../temporal.js';
import { followDeploy } from './watch.js';
import { workerPolls } from './worker.js';

/** The command that goes back to what the node ran before, from its saved state (the workflow may refine it). */
export function rollbackHintOf(state: NodeState | null, node: string, isProtected: boolean): string | null {
  const yes = isProtected ? ' --yes' : '';
  if (!state) return null;
  if (state.state === 'down') return `pulse model down --node ${node}${yes}`;
  const profile = state.state === 'up' ? state.profile : state.previousProfile;
  return profile ? `pulse model up ${profile} --node ${node}${yes}` : null;
}

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
  const base = { profile: opts.profile, node: opts.node, overlay, overlayWins: opts.overlayWins, yes: opts.yes, experimental: opts.experimental, restart: opts.restart, timeoutS: opts.timeoutS, minMemGib: opts.minMemGib };
  const draft = buildUpPlan(config, profiles, base, new Date());
  checkRefusals(draft, profileOf(profiles, opts.profile), { experimental: opts.experimental, dryRun: false });
  const state = await readNodeState(defaultStateDir(), opts.node);
  return { ...draft, rollbackHint: rollbackHintOf(state, opts.node, draft.protected) };
}

/** The refusal for a node that a deploy already holds: names the holder and how to follow or cancel it. */
async function busy(t: PulseTemporal, node: string, workflowId: string, cause: unknown): Promise<PulseError> {
  let detail = '';
  try {
    const d = await t.client.workflow.getHandle(workflowId).describe();
    const summary = await d.staticSummary();
    detail = ` (run ${d.runId}${summary ? `: ${summary}` : ''}, started ${d.startTime.toISOString()})`;
  } catch {
    // the holder may have just finished; the message stays useful without the details
  }
  return new PulseError('refused', `${node} is busy: workflow ${workflowId}${detail} holds it`, {
    hint: `follow it with: pulse model watch --node ${node}   (or stop it: pulse model cancel --node ${node})`,
    cause,
  });
}

/**
 * A full state disk, said plainly (which dir, no space left) instead of what it breaks further on (the embedded
 * server's `Failed to start Workflow`, a state write that cannot finish). Checked before connecting, and again
 * when a start fails.
 */
export async function stateDiskFull(summary: string, cause?: unknown): Promise<PulseError | null> {
  const { stateDiskProblem } = await import('../../runtime/state-disk.js');
  const p = stateDiskProblem(stateDir());
  return p ? new PulseError('precondition', `cannot start ${summary}: ${p}`, { hint: 'free space there, or point PULSE_STATE_DIR at another disk (the embedded Temporal server keeps its database there too)', cause }) : null;
}

/** Starts the workflow of a plan; a node held by another deploy is refused with the holder's workflow ID. */
export async function startDeploy(t: PulseTemporal, plan: UpPlan | DownPlan, summary: string): Promise<{ workflowId: string; runId: string }> {
  const defs = await import('../../workflows/definitions.js');
  const { WorkflowExecutionAlreadyStartedError } = await import('@temporalio/client');
  const workflowId = defs.workflowIdFor(plan.node);
  const attrs = [
    { key: defs.SA_NODE, value: plan.node },
    { key: defs.SA_ACTION, value: plan.action },
    ...(plan.action === 'up' ? [{ key: defs.SA_PROFILE, value: plan.profile }] : []),
  ];
  try {
    const handle = await t.client.workflow.start(plan.action === 'up' ? defs.UP_WORKFLOW : defs.DOWN_WORKFLOW, {
      taskQueue: defs.TASK_QUEUE,
      workflowId,
      args: [plan],
      workflowIdConflictPolicy: 'FAIL', // a running deploy holds the node
      workflowIdReusePolicy: 'ALLOW_DUPLICATE', // a closed one does not
      typedSearchAttributes: attrs,
      staticSummary: summary,
    });
    return { workflowId, runId: handle.firstExecutionRunId };
  } catch (e) {
    if (e instanceof WorkflowExecutionAlreadyStartedError) throw await busy(t, plan.node, workflowId, e);
    throw (await stateDiskFull(summary, e)) ?? new PulseError('temporal', `cannot start ${summary}: ${serverCause(e)}`, { cause: e });
  }
}

/** How up and down show a deploy: --detach, --json, --verbose. */
export interface ShowOptions {
  detach: boolean;
  json: boolean;
  verbose: boolean;
  /** --nodes: the in-process worker checks the plan against the same file. */
  nodes?: string | undefined;
}

/** Starts the deploy, then follows it, or (--detach) says how to follow it. */
export async function startAndFollow(t: PulseTemporal, plan: UpPlan | DownPlan, what: string, show: ShowOptions): Promise<number> {
  const { detach, json, verbose, nodes } = show;
  const started = await startDeploy(t, plan, what);
  if (!detach) return followDeploy(t, { ...started, node: plan.node, what, json, verbose, nodes });
  const link = uiLink(t.target, started.workflowId, started.runId);
  const lines = [`started ${what}: workflow ${started.workflowId} (run ${started.runId})`, `follow it: pulse model watch --node ${plan.node}`];
  if (link) lines.push(`Temporal UI: ${link}`);
  if (!(await workerPolls(t))) lines.push('no pulse worker serves the pulse task queues: run `pulse worker`, or `pulse model watch`, which runs one');
  if (json) process.stdout.write(JSON.stringify({ ...started, node: plan.node, ui: link }, null, 2) + '\n');
  else process.stdout.write(lines.join('\n') + '\n');
  return 0;
}

export async function run(opts: UpOptions): Promise<number> {
  const plan = await buildPlan(opts); // config errors and refusals come before any Temporal connection
  const full = await stateDiskFull(`up ${plan.profile} on ${plan.node}`);
  if (full) throw full;
  const t = await connectTemporal(opts);
  try {
    return await startAndFollow(t, plan, `up ${plan.profile} on ${plan.node}`, opts);
  } finally {
    await t.close();
  }
}
