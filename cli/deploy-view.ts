/**
 * How up, down and watch show a deploy: the header with the UI link, live step lines (ProgressPrinter), Ctrl-C as
 * a detach, the closing block, and --json (only the DeployResult on stdout, live lines on stderr). The Temporal
 * side is cli/deploy-client; the exit code of an outcome comes from the failure table.
 */
import type { DownPlan, RollbackRequest, UpPlan } from '../runtime/model/index.js';
import { followDeploy, matchBackgroundWorker, startDeploy, workerPolls, type DeployRef } from './deploy-client/index.js';
import { workerLogPath } from './deploy-client/worker-log.js';
import { backgroundPid, detachedWorker, detachLines, detachWayOut } from './detach-view.js';
import { exitCodeOf } from './exit-codes.js';
import type { FailureFacts } from './failure-block.js';
import type { FollowOutcome } from './follow-outcome.js';
import { ProgressPrinter } from './progress-printer.js';
import { uiHint, uiLink, type PulseTemporal } from './deploy-client/temporal.js';

export interface ShowRequest {
  node: string;
  json: boolean;
  /** --verbose: print each finished step's raw @pulse records (on stderr, like status --verbose). */
  verbose: boolean;
  /** --quiet: no step or progress lines, only the result (and what went wrong). */
  quiet?: boolean;
  /** The run has already closed: replay its steps and result, run no worker. */
  closed?: boolean;
  /** The command's --nodes: the in-process worker checks plans against it, and the live-state line reads it. */
  nodes?: string | undefined;
}

/** A failed deploy's way out (the container now, its logs): read from the node after the close (cli/failure-block.ts). */
async function wayOut(o: FollowOutcome, req: ShowRequest): Promise<FailureFacts | null> {
  if (o.kind !== 'closed' || o.result?.ok || o.result?.state === 'unchanged') return null;
  const { failureFacts } = await import('./failure-block.js');
  return failureFacts(req.node, req.nodes);
}

/** --json: the DeployResult, and on a failure the block the text prints under FAILED, as fields (`failure`). */
async function jsonOf(o: FollowOutcome & { kind: 'closed' }, facts: FailureFacts | null): Promise<object> {
  if (!o.result) return { ok: false, error: o.error };
  if (o.result.ok) return o.result;
  const { failureJson } = await import('./failure-block.js');
  return { ...o.result, failure: failureJson(o.result, facts) };
}

/** Follows the run and prints it as it goes, then its result; returns the exit code (0 only on success). */
export async function followAndShow(t: PulseTemporal, ref: DeployRef, req: ShowRequest): Promise<number> {
  const out = req.json ? process.stderr : process.stdout;
  const printer = new ProgressPrinter(out, Date.now, req.verbose ? { node: req.node, out: process.stderr } : null, { quiet: req.quiet === true });
  const link = uiLink(t.target, ref.workflowId, ref.runId) ?? uiHint(t.target);
  printer.progress(`${ref.what}: workflow ${ref.workflowId} (run ${ref.runId})${link ? `\n  ${link}` : ''}`);
  const ac = new AbortController();
  let interrupts = 0;
  const onSigint = () => {
    interrupts += 1;
    if (interrupts > 1) process.exit(130); // a second Ctrl-C while the worker shuts down: leave now
    ac.abort();
  };
  process.on('SIGINT', onSigint);
  let facts: FailureFacts | null = null;
  try {
    const { outcome, othersOpen } = await followDeploy(t, ref, {
      printer,
      signal: ac.signal,
      closed: req.closed === true,
      nodes: req.nodes,
      verbose: req.verbose,
      whileOpen: async (o, role) => {
        if (o.kind === 'detached') for (const l of await detachLines(t, ref, req.node, role, o)) printer.line(l);
        else {
          facts = await wayOut(o, req);
          const { failureBlockLines } = await import('./failure-block.js');
          printer.outcome(o, ref.what, facts ? failureBlockLines(facts) : []);
        }
        // The log of the worker pulse ran for it: in this process, or the background one beside the embedded server.
        if (o.kind === 'closed' && !o.result?.ok && (role.ranWorker || (await backgroundPid(t, role)) !== null)) printer.line(`  worker log: ${workerLogPath()}`);
        if (o.kind === 'closed' && o.result?.state === 'unchanged') {
          const { liveStateLine } = await import('./live-state.js');
          printer.line(`  ${await liveStateLine(req.node, req.nodes)}`);
        }
      },
    });
    if (othersOpen > 0) printer.note(`${othersOpen} other deploy(s) still open: they continue when \`pulse worker\` or the next pulse command runs`);
    if (req.json && outcome.kind === 'closed') process.stdout.write(JSON.stringify(await jsonOf(outcome, facts), null, 2) + '\n');
    return exitCodeOf(outcome);
  } finally {
    printer.close();
    process.off('SIGINT', onSigint);
  }
}

/** Starts the deploy of a plan, then follows it, or (--detach) says how to follow it. */
export async function startAndShow(t: PulseTemporal, plan: UpPlan | DownPlan | RollbackRequest, what: string, show: ShowRequest & { detach: boolean }): Promise<number> {
  const replaced = await matchBackgroundWorker(t, show.nodes); // before the start: a refusal starts nothing
  if (replaced && !show.quiet) (show.json ? process.stderr : process.stdout).write(`${replaced}\n`);
  const started = await startDeploy(t, plan, what, show.verbose);
  if (!show.detach) return followAndShow(t, started, show);
  const link = uiLink(t.target, started.workflowId, started.runId);
  const lines = [`started ${what}: workflow ${started.workflowId} (run ${started.runId})`];
  const worker = (await workerPolls(t)) ? null : await detachedWorker(t, show.nodes);
  if (worker) lines.push(worker.line);
  lines.push(...detachWayOut(plan.node, plan.action === 'up' ? plan.rollbackHint : null, 'protected' in plan ? plan.protected : plan.confirmed));
  if (link) lines.push(`Temporal UI: ${link}`);
  if (show.json) process.stdout.write(JSON.stringify({ workflowId: started.workflowId, runId: started.runId, node: plan.node, ui: link, backgroundWorker: worker?.pid ?? null }, null, 2) + '\n');
  else process.stdout.write(lines.join('\n') + '\n');
  return 0;
}
