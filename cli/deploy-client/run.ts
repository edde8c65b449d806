/**
 * The one entry of the deploy commands: `runDeploy` (up, down, rollback) checks the state disk, connects, matches
 * the background worker to this command's settings, starts the deploy, then follows it (or, with --detach, learns
 * who runs it), and closes the connection; `followWith` is its follow, which watch joins with a run it found.
 * It composes no text: what it learns goes to the view it is handed (cli/deploy-view.ts), in the order a terminal
 * shows it, and it returns the exit code the view read from the failure table.
 */
import type { DownPlan, RollbackRequest, UpPlan } from '../../runtime/model/index.js';
import type { ProgressPrinter } from '../progress-printer.js';
import { ensureBackgroundWorker, matchBackgroundWorker, type BackgroundStart } from './background.js';
import { startDeploy, stateDiskFull, type DeployRef } from './deploys.js';
import { FollowDeadline } from './deadline.js';
import { followDeploy, type FollowEnd } from './follow.js';
import { queuesServed, workerPolls } from './presence.js';
import { connectTemporal, uiHint, uiLink, type PulseTemporal, type ServerChoice } from './temporal.js';

export type DeployPlan = UpPlan | DownPlan | RollbackRequest;

/** Who runs a detached deploy when no worker polls: the background worker pulse started, why none, or a configured server's wait. */
export type DetachedWorker = BackgroundStart | { configured: true };

/** A deploy started with --detach: it runs to its end without this terminal. */
export interface DetachedStart {
  plan: DeployPlan;
  ref: DeployRef;
  link: string | null;
  /** null: a worker polls the pulse task queues. */
  worker: DetachedWorker | null;
}

/** Where a deploy's lines and its closing block go (cli/deploy-view.ts); the client calls it in the order below. */
export interface DeployView {
  /** Before the start: the background worker was replaced to match this command's settings. */
  replaced(line: string): void;
  /** The printer the follow writes to, from the run's header on (made when the follow begins). */
  printer(): ProgressPrinter;
  /** The run closed or the user detached, while this process still holds the deploy's worker; returns the exit code. */
  closing(end: FollowEnd): Promise<number>;
  /** --detach: the start, who runs it and how to follow it; returns the exit code. */
  started(s: DetachedStart): number;
  /** The follow is over (also on an error): the live line stops. */
  close(): void;
}

/** What the command's flags say about the run: the server, --verbose, --nodes, --detach. */
export interface RunRequest extends ServerChoice {
  verbose: boolean;
  /** --drain-s N (0: --no-drain) for an up or a down (a rollback carries it in its request). */
  drainS?: number | undefined;
  nodes?: string | undefined;
  detach: boolean;
}

/** "up best on spark2", "down on spark2", "rollback on spark2": the run's summary and the words of every line about it. */
export function summaryOf(plan: DeployPlan): string {
  return plan.action === 'up' ? `up ${plan.profile} on ${plan.node}` : `${plan.action} on ${plan.node}`;
}

/**
 * For `--detach` when no worker polls: beside the embedded server, the background worker (started or reused); beside
 * a configured server, nothing to start (the deploy waits for a worker).
 */
async function detachedWorker(t: PulseTemporal, nodes: string | undefined): Promise<DetachedWorker> {
  if (!t.target.embedded) return { configured: true };
  const served = await queuesServed(t);
  return ensureBackgroundWorker(t, { nodes, gateway: !served.gateway });
}

/** Starts the deploy of a plan and follows it to its end (or, --detach, leaves it running); returns the exit code. */
export async function runDeploy(plan: DeployPlan, req: RunRequest, view: DeployView): Promise<number> {
  const what = summaryOf(plan);
  const full = await stateDiskFull(what); // before connecting: the embedded server keeps its database there
  if (full) throw full;
  // Before anything starts: the worker log this deploy's worker appends to must be a file of the user's own, not a
  // link planted to a file of someone else's choosing (refused with one line; runtime/state/state-dir.ts).
  const { openWorkerLog } = await import('./worker-log.js');
  openWorkerLog();
  const t = await connectTemporal(req);
  try {
    const replaced = await matchBackgroundWorker(t, req.nodes); // before the start: a refusal starts nothing
    if (replaced) view.replaced(replaced);
    const ref = await startDeploy(t, plan, what, { verbose: req.verbose, ...(req.drainS !== undefined && plan.action !== 'rollback' ? { drainS: req.drainS } : {}) });
    if (!req.detach) return await followWith(t, ref, { ...req, closed: false }, view);
    const link = uiLink(t.target, ref.workflowId, ref.runId);
    const worker = (await workerPolls(t)) ? null : await detachedWorker(t, req.nodes);
    return view.started({ plan, ref, link, worker });
  } finally {
    await t.close();
  }
}

/** Follows a run on an open connection until it closes or Ctrl-C detaches; returns the exit code. */
export async function followWith(t: PulseTemporal, ref: DeployRef, req: { verbose: boolean; nodes?: string | undefined; closed: boolean; followTimeoutS?: number | null }, view: DeployView): Promise<number> {
  const printer = view.printer();
  printer.header(ref.what, ref.workflowId, ref.runId, uiLink(t.target, ref.workflowId, ref.runId) ?? uiHint(t.target));
  const ac = new AbortController();
  const deadline = new FollowDeadline(ac, req.followTimeoutS ?? null);
  let interrupts = 0;
  const onSigint = () => {
    interrupts += 1;
    if (interrupts > 1) process.exit(130); // a second Ctrl-C while the worker shuts down: leave now
    ac.abort();
  };
  process.on('SIGINT', onSigint);
  try {
    const code = await followDeploy(t, ref, { printer, signal: ac.signal, closed: req.closed, nodes: req.nodes, verbose: req.verbose, closing: (end) => view.closing(end) });
    const said = deadline.line();
    if (said !== null) printer.line(said);
    return deadline.exit(code);
  } finally {
    deadline.stop();
    view.close();
    process.off('SIGINT', onSigint);
  }
}
