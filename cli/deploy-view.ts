/**
 * How up, down, rollback and watch show a deploy: the view the deploy client writes to (cli/deploy-client/run.ts):
 * the header with the UI link, live step lines (ProgressPrinter), the closing block, and --json (only the
 * DeployResult on stdout, live lines on stderr). The exit code of an outcome comes from the failure table.
 */
import type { DeployView, DetachedStart, FollowEnd } from './deploy-client/index.js';
import { workerLogPath } from './deploy-client/worker-log.js';
import { detachedWorkerLine, detachLines, detachWayOut } from './detach-view.js';
import { exitCodeOf } from './exit-codes.js';
import type { FailureFacts } from './failure-block.js';
import type { FollowOutcome } from './follow-outcome.js';
import { ProgressPrinter } from './progress-printer.js';

export interface ShowRequest {
  node: string;
  json: boolean;
  /** --verbose: print each finished step's raw @pulse records (on stderr, like status --verbose). */
  verbose: boolean;
  /** --quiet: no step or progress lines, only the result (and what went wrong). */
  quiet?: boolean;
  /** The command's --nodes: the live-state line and the failure block read it. */
  nodes?: string | undefined;
}

/** A failed deploy's way out (the container now, its logs): read from the node after the close (cli/failure-block.ts). */
async function wayOut(o: FollowOutcome, req: ShowRequest): Promise<FailureFacts | null> {
  if (o.kind !== 'closed' || o.result?.ok || o.result?.state === 'unchanged') return null;
  const { failureFacts } = await import('./failure-block.js');
  return failureFacts(req.node, req.nodes, o.result);
}

/**
 * --json: the DeployResult, and on a failure the block the text prints under FAILED, as fields (`failure`); with the
 * run that made it (`workflowId`, `runId`, `ui`: its Web UI page or null), so a script can find it again (issue 30).
 */
async function jsonOf(o: FollowOutcome & { kind: 'closed' }, facts: FailureFacts | null, end: FollowEnd): Promise<object> {
  const run = { workflowId: end.ref.workflowId, runId: end.ref.runId, ui: end.link };
  if (!o.result) return { ok: false, error: o.error, ...run };
  if (o.result.ok) return { ...o.result, ...run };
  const { failureJson } = await import('./failure-block.js');
  return { ...o.result, failure: failureJson(o.result, facts), ...run };
}

/** The view of one deploy command's run; the printer exists from the header on. */
export function deployView(req: ShowRequest): DeployView {
  let made: ProgressPrinter | null = null;
  const out = req.json ? process.stderr : process.stdout;
  return {
    replaced(line) {
      if (!req.quiet) out.write(`${line}\n`);
    },

    printer() {
      made = new ProgressPrinter(out, Date.now, req.verbose ? { node: req.node, out: process.stderr } : null, { quiet: req.quiet === true });
      return made;
    },

    async closing(end: FollowEnd) {
      const p = made!;
      const o = end.outcome;
      let facts: FailureFacts | null = null;
      if (o.kind === 'detached') for (const l of detachLines(end, req.node, o)) p.line(l);
      else {
        facts = await wayOut(o, req);
        const { failureBlockLines } = await import('./failure-block.js');
        p.outcome(o, end.ref.what, facts ? failureBlockLines(facts) : [], facts?.status?.env?.path ?? null);
      }
      // The log of the worker pulse ran for it: in this process, or the background one beside the embedded server.
      if (o.kind === 'closed' && !o.result?.ok && (end.ranWorker || end.background !== null)) p.line(`  worker log: ${workerLogPath()}`);
      if (o.kind === 'closed' && o.result?.state === 'unchanged') {
        const { liveStateLine } = await import('./live-state.js');
        p.line(`  ${await liveStateLine(req.node, req.nodes)}`);
      }
      if (end.othersOpen > 0) p.note(`${end.othersOpen} other deploy(s) still open: they continue when \`pulse worker\` or the next pulse command runs`);
      if (req.json && o.kind === 'closed') process.stdout.write(JSON.stringify(await jsonOf(o, facts, end), null, 2) + '\n');
      return exitCodeOf(o);
    },

    started({ plan, ref, link, worker }: DetachedStart) {
      const lines = [`started ${ref.what}: workflow ${ref.workflowId} (run ${ref.runId})`];
      if (worker) lines.push(detachedWorkerLine(worker));
      lines.push(...detachWayOut(plan.node, plan.action === 'up' ? plan.rollbackHint : null, 'protected' in plan ? plan.protected : plan.confirmed));
      if (link) lines.push(`Temporal UI: ${link}`);
      const pid = worker && 'pid' in worker ? worker.pid : null;
      if (req.json) process.stdout.write(JSON.stringify({ workflowId: ref.workflowId, runId: ref.runId, node: plan.node, ui: link, backgroundWorker: pid }, null, 2) + '\n');
      else process.stdout.write(lines.join('\n') + '\n');
      return 0;
    },

    close() {
      made?.close();
    },
  };
}
