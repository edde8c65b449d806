/**
 * Following a deploy: the run's history from the server (follow-run.ts) while a worker is kept for it (this
 * process runs one when none polls). The printer it writes to and the closing block come from the view it is
 * handed (run.ts); the block is asked for once the run closed (or the user detached) and before the in-process
 * worker stops, so what it prints comes before the worker's shutdown wait.
 */
import type { FollowOutcome } from '../follow-outcome.js';
import { followRun } from './follow-run.js';
import type { ProgressPrinter } from '../progress-printer.js';
import { liveBackgroundWorker } from './background-worker.js';
import { stateDir, uiLink, type PulseTemporal } from './temporal.js';
import type { DeployRef } from './deploys.js';
import { WorkerKeeper } from './local-worker.js';
import { watchPinnedBuild } from './pinned-build.js';
import { openDeploys } from './presence.js';

/** How a follow ended, as data for the closing block: the outcome and who runs (or ran) the deploy's worker. */
export interface FollowEnd {
  ref: DeployRef;
  outcome: FollowOutcome;
  /** This process ran the deploy's worker (it stops once the block is printed). */
  ranWorker: boolean;
  /** The background worker beside the embedded server (this command's, or one an earlier command started), or null. */
  background: number | null;
  /** Other nodes' deploys still open that our in-process worker also served (they wait for the next worker). */
  othersOpen: number;
  /** The run's Temporal UI page, or null when no UI base is known. */
  link: string | null;
}

export interface FollowOptions {
  printer: ProgressPrinter;
  /** Aborted by Ctrl-C: stop following, the deploy goes on. */
  signal: AbortSignal;
  /** The run has already closed: replay its steps and result, run no worker. */
  closed: boolean;
  /** The command's --nodes: the in-process worker checks plans against it. */
  nodes?: string | undefined;
  /** --verbose: the in-process worker's log lines also on stderr. */
  verbose?: boolean;
  /** The closing block, while the in-process worker (if any) still runs; returns the exit code. */
  closing: (end: FollowEnd) => Promise<number>;
}

export async function followDeploy(t: PulseTemporal, ref: DeployRef, o: FollowOptions): Promise<number> {
  const keeper = new WorkerKeeper(t, (l) => o.printer.progress(l), { nodes: o.nodes, verbose: o.verbose === true });
  if (!o.closed) await keeper.start();
  const stopPinCheck = o.closed ? () => undefined : watchPinnedBuild(t, ref, (l) => o.printer.line(l));
  const outcome = await followRun(t.client, ref.workflowId, ref.runId, { printer: o.printer, signal: o.signal }).finally(stopPinCheck);
  const own = keeper.local?.background ?? null;
  const ranWorker = keeper.local !== null && own === null;
  const background = own ?? (t.target.embedded ? ((await liveBackgroundWorker(stateDir()))?.pid ?? null) : null);
  const othersOpen = ranWorker && outcome.kind === 'closed' ? await openDeploys(t, ref.workflowId).catch(() => 0) : 0;
  const code = await o.closing({ ref, outcome, ranWorker, background, othersOpen, link: uiLink(t.target, ref.workflowId, ref.runId) });
  await keeper.stop();
  return code;
}
