/**
 * The way out of a failed deploy, printed under its FAILED line every time: the container as the node has it now
 * (still running? what memory is left?), the start log's path and the container log's last lines (redacted on the
 * node), and where to read more. The backup and the rollback command follow (progress-printer.ts). What the node
 * says is read after the deploy closed, read-only (status.sh without HTTP, logs.sh) over one pooled connection;
 * a node that does not answer is said so, never thrown.
 */
import type { DeployResult, FailedStart } from '../runtime/model/index.js';
import { goBackCommand } from './progress-printer.js';
import type { NodeStatus } from '../runtime/status/types.js';
import type { LogsSource } from '../runtime/status/logs.js';
import type { KnownFailure } from '../runtime/vllm/known-failures.js';

export { LOG_LINES } from '../runtime/status/log-tail.js';

/** How long each read may take: the failure is already known, the block must not hold the prompt long. */
const READ_TIMEOUT_MS = 20_000;

/** What the node says after the failure: the data the block prints. */
export interface FailureFacts {
  node: string;
  /** null: the node did not answer (`problem` says why). */
  status: NodeStatus | null;
  /** The deploy's start log (logs/pulse-up-*.log), when the node has one. */
  startLog: string | null;
  /** The container log's last lines, redacted on the node. */
  lines: string[];
  logSource: LogsSource | null;
  problem: string | null;
  /** A vLLM failure pulse knows by its line (runtime/vllm/known-failures.ts), found in the log's last lines. */
  known?: KnownFailure | null;
  /**
   * An up whose auto-rollback ran: its failed start as read before the rollback removed the container (the up's
   * result). The node now runs the restored server, so the block's start log and lines are these, not the node's.
   */
  failedStart?: FailedStart | null;
  /** The profile the auto-rollback serves again (it succeeded): the container the node runs now is that one. */
  restored?: string | null;
}

const gib = (n: number | null | undefined): string => (n === null || n === undefined ? '?' : n.toFixed(1));

/**
 * Reads the facts; never throws (a failure to read is a fact too). `result`: the failed deploy's; after an
 * auto-rollback the failed start's log and lines come from it (the node holds the restored server's).
 */
export async function failureFacts(node: string, nodesFile: string | undefined, result: DeployResult | null = null): Promise<FailureFacts> {
  const facts: FailureFacts = { node, status: null, startLog: null, lines: [], logSource: null, problem: null };
  if (result?.failedStart) {
    facts.failedStart = result.failedStart;
    facts.startLog = result.failedStart.logPath;
    facts.lines = result.failedStart.lines;
    facts.known = result.failedStart.known;
  }
  if (result?.rollback?.ok) facts.restored = result.rollback.profile ?? '?';
  try {
    const { loadNodesConfig, nodeOf, targetOf } = await import('../runtime/config/nodes.js');
    const { resolveNodesPath } = await import('../runtime/state/paths.js');
    const { statusOfNode } = await import('../runtime/status/collect.js');
    const { readLogs } = await import('../runtime/status/logs.js');
    const { readLogTail } = await import('../runtime/status/log-tail.js');
    const { NodePool } = await import('../runtime/node/connect.js');
    const { trustedStateDir, readNodeState } = await import('../runtime/state/state.js');
    const config = loadNodesConfig(resolveNodesPath(nodesFile));
    const cfg = nodeOf(config, node);
    const pool = new NodePool();
    try {
      const req = { node, http: false, gpuProbe: false, yes: false };
      facts.status = await statusOfNode(config, node, req, { open: async (t) => pool.session(t), stateDir: trustedStateDir(), nodeTimeoutMs: READ_TIMEOUT_MS });
      if (!facts.status.answered) {
        facts.problem = facts.status.error ?? 'no answer';
        return facts;
      }
      if (facts.failedStart) return facts; // the node's logs are the restored server's now
      const session = pool.session(targetOf(node, cfg));
      const state = await readNodeState(trustedStateDir(), node).catch(() => null);
      const signal = (): AbortSignal => AbortSignal.timeout(READ_TIMEOUT_MS);
      const ignore = { source: () => undefined, line: () => undefined };
      const deployLog = { source: 'deploy', tail: 0, follow: false, deployLog: state?.logPath ?? null } as const;
      facts.startLog = await readLogs(session, cfg, deployLog, ignore, signal()).then((s) => s.name, () => null);
      if (facts.status.container?.exists) {
        const tail = await readLogTail(session, cfg, 'container', state?.logPath ?? null, signal()).catch((e: unknown) => {
          facts.problem = `the container log could not be read: ${(e as Error).message}`;
          return null;
        });
        facts.logSource = tail?.source ?? null;
        facts.lines = tail?.lines ?? [];
        facts.known = tail?.known ?? null;
      }
    } finally {
      await pool.closeAll();
    }
  } catch (e) {
    facts.problem = (e as Error).message;
  }
  return facts;
}

/** The container's state in words, with what it means for the node's memory. */
function containerLine(f: FailureFacts): string {
  const s = f.status;
  if (!s) return `container: unknown, ${f.node} did not answer (${f.problem ?? 'no answer'}): pulse model status --node ${f.node}`;
  const c = s.container;
  const m = s.memory;
  const mem = m?.availableGiB !== null && m?.availableGiB !== undefined ? `, MemAvailable ${gib(m.availableGiB)} of ${gib(m.totalGiB)} GiB` : '';
  if (!c?.exists) return s.dockerDown ? `container: unknown, ${s.dockerDown}${mem}` : `container: none on ${f.node}${mem}`;
  // The auto-rollback serves again: the container is the restored server, which must not be stopped.
  if (f.restored !== undefined && f.restored !== null && c.running) return `container ${c.name}: running ${f.restored} again, started by the auto-rollback${mem}`;
  const loops = c.restartCount ? `; its restart policy restarted it ${c.restartCount} time(s)` : '';
  if (c.running || c.state === 'restarting') {
    const loop = loops ? `${loops} and it loops until stopped` : '';
    return `container ${c.name}: still ${c.state}${loop}${mem}; it holds its memory until it stops: pulse model down --node ${f.node}`;
  }
  // docker leaves a container whose start failed `created`, never started, with the cause in State.Error.
  if (c.state === 'created' && c.error) return `container ${c.name}: created, never started: docker could not start it: ${c.error}${mem}`;
  return `container ${c.name}: ${c.state}${c.exitMeaning ? ` (${c.exitMeaning})` : ''}${loops}${c.error ? `; error: ${c.error}` : ''}${mem}`;
}

/** The lines of the block (the printer indents them and drops control characters). */
export function failureBlockLines(f: FailureFacts): string[] {
  const lines = [containerLine(f)];
  // A failure pulse knows by its line: named, with its relief, before the lines it was read from.
  if (f.known) lines.push(`known failure: ${f.known.summary}`, `  ${f.known.relief}`, `  log: ${f.known.line}`);
  if (f.failedStart) return [...lines, ...failedStartLines(f.node, f.failedStart)];
  if (f.startLog) lines.push(`start log: ${f.startLog}  (pulse model logs --node ${f.node} --deploy)`);
  if (f.lines.length > 0) {
    lines.push(`last ${f.lines.length} line(s) of the container log (more: pulse model logs --node ${f.node} --tail 200):`);
    lines.push(...f.lines.map((l) => `  | ${l}`));
  } else if (f.status?.container?.exists) {
    lines.push(`the container log has no lines${f.problem ? ` (${f.problem})` : ''}`);
  }
  return lines;
}

/**
 * The failed start read before the auto-rollback removed its container: its start log (the node state names the
 * rollback's now, so the command names this one) and the last lines the up kept.
 */
function failedStartLines(node: string, s: FailedStart): string[] {
  const lines: string[] = [];
  if (s.logPath) lines.push(`failed start's log: ${s.logPath}`, `  (pulse model logs --node ${node} --deploy ${s.logPath})`);
  const of = s.source === 'start log' ? "the failed start's start log (its container was gone)" : "the failed start's container log, read before the auto-rollback removed it";
  if (s.lines.length > 0) lines.push(`last ${s.lines.length} line(s) of ${of}:`, ...s.lines.map((l) => `  | ${l}`));
  else lines.push(`the failed start's log lines were not read${s.problem ? ` (${s.problem})` : ''}`);
  return lines;
}

/** The failure block of `--json` (up, down, rollback, watch): what the text prints under FAILED, as fields. */
export interface FailureJson {
  /** The step that failed (its name in `steps`), or null when the deploy failed outside a step. */
  step: string | null;
  /** The ApplicationFailure type of the first error (Timeout, Refused, VerifyFailed, Cancelled...). */
  errorType: string | null;
  /** The first error, without the step's name in front. */
  message: string;
  /** What the compensation did (null: it did not run, e.g. the deploy failed before the stop began). */
  compensated: { nodeMarkedFailed: true; endpointDisabled: true } | null;
  backupPath: string | null;
  /** The command that brings the previous profile back (null when an automatic rollback already did). */
  rollbackCommand: string | null;
  /** The node read after the close (null: not read, the deploy changed nothing there). */
  node: {
    answered: boolean;
    problem: string | null;
    container: { name: string; state: string; running: boolean; exitMeaning: string | null } | null;
    memAvailableGiB: number | null;
    memTotalGiB: number | null;
    startLog: string | null;
    /** The container log's last lines, redacted on the node (as the text block prints them). */
    logLines: string[];
    /** A vLLM failure pulse knows by its line (id, what it means, its relief), or null. */
    knownFailure: { id: string; summary: string; relief: string } | null;
  } | null;
}

/** The failure block of a failed result as --json fields; `facts`: what the node said (null when it was not read). */
export function failureJson(r: DeployResult, facts: FailureFacts | null): FailureJson {
  const step = r.steps.find((s) => !s.ok)?.step ?? null;
  const error = r.error ?? 'deploy failed';
  const c = facts?.status?.container;
  return {
    step,
    errorType: r.errorType ?? null,
    message: step !== null && error.startsWith(`${step}: `) ? error.slice(step.length + 2) : error,
    compensated: r.compensated === true ? { nodeMarkedFailed: true, endpointDisabled: true } : null,
    backupPath: r.backupPath,
    rollbackCommand: r.rollback?.ok ? null : goBackCommand(r, facts?.status?.env?.path ?? null),
    node: facts === null ? null : {
      answered: facts.status?.answered === true,
      problem: facts.problem,
      container: c ? { name: c.name, state: c.state, running: c.running, exitMeaning: c.exitMeaning } : null,
      memAvailableGiB: facts.status?.memory?.availableGiB ?? null,
      memTotalGiB: facts.status?.memory?.totalGiB ?? null,
      startLog: facts.startLog,
      logLines: facts.lines,
      knownFailure: facts.known ? { id: facts.known.id, summary: facts.known.summary, relief: facts.known.relief } : null,
    },
  };
}
