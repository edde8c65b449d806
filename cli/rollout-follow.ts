/**
 * Starting and following a rollout (issue 15). The rollout's own workflow ID names its node set; each child runs
 * under its node's ID. Following: one worker kept for the whole rollout (this process's, or the background one),
 * the rollout's query says which child runs, and each child is followed with the single deploy's follower
 * (cli/deploy-client/follow-run.ts), one after the other; at the end the node outcomes.
 */
import { PulseError } from '../runtime/errors.js';
import type { RolloutProgress, RolloutRequest } from '../runtime/model/index.js';
import { runningDeploy, stateDiskFull, WorkerKeeper, type DeployRef } from './deploy-client/index.js';
import { followRun } from './deploy-client/follow-run.js';
import { FollowDeadline } from './deploy-client/deadline.js';
import { ProgressPrinter } from './progress-printer.js';
import { ROLLOUT_DETACHED, rolloutExit, rolloutResultText } from './rollout-view.js';
import { serverCause, uiHint, uiLink, type PulseTemporal } from './deploy-client/temporal.js';

const what = (r: Pick<RolloutRequest, 'action' | 'profile' | 'nodes'>): string => `rollout ${r.action === 'up' ? `up ${r.profile ?? '?'}` : 'down'} on ${r.nodes.join(', ')}`;

/** Starts rolloutWorkflow; a node held by another deploy, or the same node set's running rollout, is refused. */
export async function startRollout(t: PulseTemporal, request: RolloutRequest, workflowId: string): Promise<DeployRef> {
  const summary = what(request);
  const full = await stateDiskFull(summary);
  if (full) throw full;
  for (const n of request.nodes) {
    const held = await runningDeploy(t, n);
    if (held) throw new PulseError('refused', `${n} is busy: workflow ${held.workflowId} (${held.what}) holds it`, { hint: `follow it: pulse model watch --node ${n}` });
  }
  const defs = await import('../workflows/definitions.js');
  const { WorkflowExecutionAlreadyStartedError } = await import('@temporalio/client');
  try {
    const handle = await t.client.workflow.start(defs.ROLLOUT_WORKFLOW, {
      taskQueue: defs.TASK_QUEUE, workflowId, args: [request],
      workflowIdConflictPolicy: 'FAIL', workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      typedSearchAttributes: [{ key: defs.SA_ACTION, value: 'rollout' }, ...(request.profile ? [{ key: defs.SA_PROFILE, value: request.profile }] : [])],
      staticSummary: summary,
      staticDetails: `nodes in order: ${request.nodes.join(' → ')}; ${request.maxParallel} at a time${request.allowOutage ? '; --allow-outage' : ''}${request.autoRollback ? '; --auto-rollback' : ''}`,
    });
    return { workflowId, runId: handle.firstExecutionRunId, what: summary };
  } catch (e) {
    if (e instanceof WorkflowExecutionAlreadyStartedError) throw new PulseError('refused', `a rollout of these nodes already runs (workflow ${workflowId})`, { hint: 'follow it with: pulse model watch --node <one of them>' });
    throw new PulseError('temporal', `cannot start ${summary}: ${serverCause(e)}`, { cause: e });
  }
}

export interface RolloutFollow {
  json: boolean;
  quiet: boolean;
  verbose: boolean;
  nodes: string | undefined;
  detach: boolean;
  /** The run has already closed: print its outcomes only. */
  closed?: boolean;
  /** watch --timeout: stop following after this many seconds, exit 8 (null: follow to the end). */
  timeoutS?: number | null;
}

/** The rollout's progress: its query while it runs, else its result (or the failure's details). */
export async function rolloutState(t: PulseTemporal, ref: DeployRef): Promise<{ running: boolean; progress: RolloutProgress | null }> {
  const h = t.client.workflow.getHandle(ref.workflowId, ref.runId);
  const d = await h.describe();
  if (d.status.name === 'RUNNING') return { running: true, progress: await h.query<RolloutProgress>('rollout').catch(() => null) };
  try {
    return { running: false, progress: await h.result() as RolloutProgress };
  } catch (e) {
    const det = ((e as { cause?: { details?: unknown[] } }).cause?.details ?? [])[0];
    return { running: false, progress: det && typeof det === 'object' && 'nodes' in det ? (det as RolloutProgress) : null };
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The node's entry once its gate has a verdict (the child closed, then the smoke), or null when the rollout ended first. */
async function gateOf(t: PulseTemporal, ref: DeployRef, node: string, signal: AbortSignal): Promise<RolloutProgress['nodes'][number] | null> {
  while (!signal.aborted) {
    const s = await rolloutState(t, ref);
    const n = s.progress?.nodes.find((x) => x.node === node);
    if (n && n.status !== 'running') return n;
    if (!s.running) return null;
    await sleep(300);
  }
  return null;
}

/** Follows the rollout (or, detached, says how); returns the exit code of its outcome. */
export async function followRollout(t: PulseTemporal, ref: DeployRef, o: RolloutFollow): Promise<number> {
  const out = o.json ? process.stderr : process.stdout;
  const printer = new ProgressPrinter(out, Date.now, null, { quiet: o.quiet });
  const link = uiLink(t.target, ref.workflowId, ref.runId) ?? uiHint(t.target);
  printer.progress(`${ref.what}: workflow ${ref.workflowId} (run ${ref.runId})${link ? `\n  ${link}` : ''}`);
  const keeper = new WorkerKeeper(t, (l) => printer.progress(l), { nodes: o.nodes, verbose: o.verbose });
  const ac = new AbortController();
  const deadline = new FollowDeadline(ac, o.timeoutS ?? null);
  const onSigint = () => ac.abort();
  if (!o.detach) process.on('SIGINT', onSigint);
  let last: RolloutProgress | null = null;
  try {
    if (!o.closed) await keeper.start();
    if (o.detach) {
      printer.line(`started; follow it: pulse model watch --node ${ref.what.split(' on ')[1]?.split(', ')[0] ?? '<node>'}; stop it after the current node: pulse model cancel --node <node> (--now: at once)`);
      return 0;
    }
    const followed = new Set<string>();
    for (;;) {
      const s = await rolloutState(t, ref);
      last = s.progress ?? last;
      for (const n of last?.nodes ?? []) {
        if (n.runId === null || n.workflowId === null || followed.has(n.runId) || ac.signal.aborted) continue;
        followed.add(n.runId);
        printer.progress(`── ${n.node} (${[...followed].length}/${last?.nodes.length ?? '?'})`);
        const r = await followRun(t.client, n.workflowId, n.runId, { printer, signal: ac.signal });
        printer.outcome(r, `${last?.action ?? ''} on ${n.node}`);
        const gated = await gateOf(t, ref, n.node, ac.signal);
        if (gated) printer.progress(`  gate on ${n.node}: ${gated.status}${gated.gate ? ` — ${gated.gate}` : ''}`);
      }
      if (ac.signal.aborted) {
        printer.line('detached: the rollout goes on; follow it again with pulse model watch --node <one of its nodes>');
        const said = deadline.line();
        if (said !== null) printer.line(said);
        return deadline.exit(ROLLOUT_DETACHED);
      }
      if (!s.running) break;
      await sleep(500);
    }
    if (last) printer.line(rolloutResultText(last).trimEnd());
    if (o.json) process.stdout.write(`${JSON.stringify(last, null, 2)}\n`);
    return rolloutExit(last);
  } finally {
    deadline.stop();
    printer.close();
    process.off('SIGINT', onSigint);
    await keeper.stop();
  }
}
