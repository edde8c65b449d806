/**
 * `pulse model watch --node <node>`, and `followDeploy`, which `up` and `down` share: follow a deploy from the
 * server until it ends (exit 0 only on success), or detach on Ctrl-C while the deploy goes on.
 */
import type { NodeOnlyOptions } from '../options.js';
import { EXIT_CODES, PulseError, type PulseErrorKind } from '../../runtime/errors.js';
import { connectTemporal, uiHint, uiLink, type PulseTemporal } from '../temporal.js';
import { followRun, type FollowOutcome } from '../progress.js';
import { ProgressPrinter } from '../progress-printer.js';
import { ensureWorker, openDeploys, type LocalWorker } from './worker.js';

/** ApplicationFailure type (workflows/failures.ts) → the CLI's exit code kind. */
const KIND_OF_FAILURE: Record<string, PulseErrorKind> = {
  ConfigError: 'config',
  PreconditionFailed: 'precondition',
  Refused: 'refused',
  Unreachable: 'unreachable',
  NotReady: 'not-ready',
  Timeout: 'timeout',
  ScriptFailed: 'script',
  VerifyFailed: 'script',
  Unauthorized: 'unauthorized',
};

/** Exit code of a finished deploy: 0 only on success. */
export function exitCodeOf(o: FollowOutcome): number {
  if (o.kind === 'detached') return 130;
  if (o.result?.ok) return 0;
  const type = o.result?.errorType ?? o.errorType;
  const kind = type ? KIND_OF_FAILURE[type] : undefined;
  return kind ? EXIT_CODES[kind] : 1;
}

export interface FollowRequest {
  workflowId: string;
  runId: string;
  node: string;
  /** e.g. "up best on spark2" */
  what: string;
  json: boolean;
  /** --verbose: print each finished step's raw @pulse records (on stderr, like status --verbose). */
  verbose?: boolean;
  /** The run has already closed: replay its steps and result, run no worker. */
  closed?: boolean;
  /** The command's --nodes: the in-process worker checks plans against it, and the live-state line reads it. */
  nodes?: string | undefined;
}

function detachLines(t: PulseTemporal, req: FollowRequest, local: LocalWorker | null): string[] {
  const lines = local
    ? [
        'detached. This pulse ran the deploy\'s worker, which stops now: the deploy pauses (its state is safe in Temporal)',
        'and continues when the next pulse command or `pulse worker` runs. The running step gets a few seconds to finish',
        '(Ctrl-C again to leave at once).',
      ]
    : ['detached: the deploy goes on.'];
  lines.push(`watch it again: pulse model watch --node ${req.node}`);
  const link = uiLink(t.target, req.workflowId, req.runId);
  if (link) lines.push(`Temporal UI: ${link}`);
  return lines;
}

/**
 * Keeps a worker for the deploy: checks now and every WORKER_CHECK_MS whether a live worker polls, and runs one in
 * this process when none does (e.g. the `pulse worker` serving the deploy died while we follow it).
 */
class WorkerKeeper {
  local: LocalWorker | null = null;
  private timer: NodeJS.Timeout | null = null;
  private checking = false;

  constructor(private readonly t: PulseTemporal, private readonly say: (l: string) => void, private readonly nodes?: string) {}

  async start(): Promise<void> {
    await this.check();
    this.timer = setInterval(() => void this.check().catch(() => undefined), WORKER_CHECK_MS);
  }

  private async check(): Promise<void> {
    if (this.local || this.checking) return;
    this.checking = true;
    try {
      this.local = await ensureWorker(this.t, this.say, true, this.nodes);
    } finally {
      this.checking = false;
    }
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    while (this.checking) await new Promise((r) => setTimeout(r, 50));
    await this.local?.stop();
  }
}

const WORKER_CHECK_MS = 15_000;

/** Follows the run (with an in-process worker when none polls) and prints the result; returns the exit code. */
export async function followDeploy(t: PulseTemporal, req: FollowRequest): Promise<number> {
  // With --json only the DeployResult goes to stdout; the live lines go to stderr.
  const out = req.json ? process.stderr : process.stdout;
  const printer = new ProgressPrinter(out, Date.now, req.verbose ? { node: req.node, out: process.stderr } : null);
  const link = uiLink(t.target, req.workflowId, req.runId) ?? uiHint(t.target);
  printer.line(`${req.what}: workflow ${req.workflowId} (run ${req.runId})${link ? `\n  ${link}` : ''}`);
  const keeper = new WorkerKeeper(t, (l) => printer.line(l), req.nodes);
  const ac = new AbortController();
  let interrupts = 0;
  const onSigint = () => {
    interrupts += 1;
    if (interrupts > 1) process.exit(130); // a second Ctrl-C while the worker shuts down: leave now
    ac.abort();
  };
  process.on('SIGINT', onSigint);
  let outcome: FollowOutcome;
  try {
    if (!req.closed) await keeper.start();
    outcome = await followRun(t.client, req.workflowId, req.runId, { printer, signal: ac.signal });
    if (outcome.kind === 'detached') for (const l of detachLines(t, req, keeper.local)) printer.line(l);
    else printer.outcome(outcome, req.what);
    if (outcome.kind === 'closed' && outcome.result?.state === 'unchanged') {
      const { liveStateLine } = await import('../live-state.js');
      printer.line(`  ${await liveStateLine(req.node, req.nodes)}`);
    }
    await keeper.stop();
    if (keeper.local && outcome.kind === 'closed') await noteOthers(t, printer, req.workflowId);
  } finally {
    process.off('SIGINT', onSigint);
  }
  if (req.json && outcome.kind === 'closed') process.stdout.write(JSON.stringify(outcome.result ?? { ok: false, error: outcome.error }, null, 2) + '\n');
  return exitCodeOf(outcome);
}

/** Our in-process worker also served other nodes' deploys: they wait for the next worker now. */
async function noteOthers(t: PulseTemporal, printer: ProgressPrinter, self: string): Promise<void> {
  const others = await openDeploys(t, self).catch(() => 0);
  if (others > 0) printer.note(`${others} other deploy(s) still open: they continue when \`pulse worker\` or the next pulse command runs`);
}

/** The latest deploy of the node (running or not), or null when the node never had one. */
export async function latestDeploy(t: PulseTemporal, node: string): Promise<{ workflowId: string; runId: string; what: string; running: boolean } | null> {
  const { workflowIdFor, SA_PROFILE } = await import('../../workflows/definitions.js');
  const workflowId = workflowIdFor(node);
  try {
    const d = await t.client.workflow.getHandle(workflowId).describe();
    const profile = d.typedSearchAttributes.get(SA_PROFILE);
    const action = d.type.replace(/Workflow$/, '');
    return { workflowId, runId: d.runId, what: `${action}${profile ? ` ${profile}` : ''} on ${node}`, running: d.status.name === 'RUNNING' };
  } catch (e) {
    if ((e as Error).name === 'WorkflowNotFoundError') return null;
    throw e;
  }
}

/** The run that holds the node now (the per-node lock), or null. */
export async function runningDeploy(t: PulseTemporal, node: string): Promise<{ workflowId: string; runId: string; what: string } | null> {
  const d = await latestDeploy(t, node);
  return d?.running ? d : null;
}

export async function run(opts: NodeOnlyOptions): Promise<number> {
  const t = await connectTemporal(opts);
  try {
    const last = await latestDeploy(t, opts.node);
    if (!last) {
      throw new PulseError('usage', `no deploy has run on ${opts.node}`, { hint: `start one with: pulse model up <profile> --node ${opts.node}` });
    }
    // A deploy that ended while nobody watched (e.g. after a detach): show how it went, with its exit code.
    if (!last.running) process.stdout.write(`no deploy runs on ${opts.node} now; the last one has ended:\n`);
    return await followDeploy(t, { ...last, node: opts.node, json: opts.json, verbose: opts.verbose, closed: !last.running, nodes: opts.nodes });
  } finally {
    await t.close();
  }
}
