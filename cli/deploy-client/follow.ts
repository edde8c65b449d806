/**
 * Following a deploy: the run's history from the server (follow-run.ts) while a worker is kept for it (this
 * process runs one when none polls). The caller prints; `whileOpen` runs after the run closed (or the user
 * detached) and before the in-process worker stops, so what it prints comes before the worker's shutdown wait.
 */
import type { FollowOutcome } from '../follow-outcome.js';
import { followRun } from './follow-run.js';
import type { ProgressPrinter } from '../progress-printer.js';
import type { PulseTemporal } from './temporal.js';
import type { DeployRef } from './deploys.js';
import { WorkerKeeper } from './local-worker.js';
import { watchPinnedBuild } from './pinned-build.js';
import { openDeploys } from './presence.js';

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
  /** Runs once the run closed or the user detached, before the in-process worker (if any) stops. */
  whileOpen?: (outcome: FollowOutcome, worker: WorkerRole) => Promise<void>;
}

/** Which worker this follow provided: one in this process (`ranWorker`), the background one (its pid), or none. */
export interface WorkerRole {
  ranWorker: boolean;
  background: number | null;
}

/** How a follow ended: the outcome, whether this process ran the worker, and how many other deploys it left open. */
export interface Followed {
  outcome: FollowOutcome;
  ranWorker: boolean;
  /** Other nodes' deploys still open that our in-process worker also served (they wait for the next worker). */
  othersOpen: number;
}

export async function followDeploy(t: PulseTemporal, ref: DeployRef, o: FollowOptions): Promise<Followed> {
  const keeper = new WorkerKeeper(t, (l) => o.printer.progress(l), { nodes: o.nodes, verbose: o.verbose === true });
  if (!o.closed) await keeper.start();
  const stopPinCheck = o.closed ? () => undefined : watchPinnedBuild(t, ref, (l) => o.printer.line(l));
  const outcome = await followRun(t.client, ref.workflowId, ref.runId, { printer: o.printer, signal: o.signal }).finally(stopPinCheck);
  const background = keeper.local?.background ?? null;
  const ranWorker = keeper.local !== null && background === null;
  await o.whileOpen?.(outcome, { ranWorker, background });
  await keeper.stop();
  const othersOpen = ranWorker && outcome.kind === 'closed' ? await openDeploys(t, ref.workflowId).catch(() => 0) : 0;
  return { outcome, ranWorker, othersOpen };
}
