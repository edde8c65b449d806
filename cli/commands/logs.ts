/**
 * `pulse model logs --node <node> [-f] [--tail N] [--deploy]`: the container's log, or with --deploy the last
 * deploy's start log, over the node's ssh connection (one pooled session). Lines go to stdout as they arrive (what
 * is read goes to stderr first, so a pipe gets the log alone); the node redacts API_KEY/HF_TOKEN values before a
 * line leaves it. -f follows until Ctrl-C (exit 0), or until the container stops.
 */
import { loadNodesConfig, nodeOf, type NodeConfig } from '../../runtime/config/nodes.js';
import { PulseError } from '../../runtime/errors.js';
import { resolveNodesPath } from '../../runtime/state/paths.js';
import { trustedStateDir, readNodeState } from '../../runtime/state/state.js';
import { targetOf } from '../../runtime/config/nodes.js';
import { readLogs, type FollowEnd, type LogsSink, type LogsSource } from '../../runtime/status/logs.js';
import { plainText } from '../live-line.js';
import type { LogsOptions } from '../options.js';

/** The line on stderr that says what is shown. */
export function sourceLine(node: string, s: LogsSource, follow: boolean): string {
  const what = s.source === 'deploy' ? `deploy start log ${s.name}` : `container ${s.name} (${s.status})`;
  const more = !follow ? '' : s.source === 'container' && !s.running ? '; it does not run: nothing to follow' : '; following, Ctrl-C to stop';
  return `pulse: ${what} on ${node}, recipe ${s.recipe}${more}`;
}

/**
 * The line that says why a follow ended (issue 30 item 9): a deploy replaced the container, it was removed, it
 * stopped (its exit code), or its log closed while it runs (the daemon's side). Null when the read was no follow.
 */
export function followEndLine(name: string, node: string, end: FollowEnd): string | null {
  if (end === null) return null;
  const again = `pulse model logs --node ${node} -f`;
  if (end === 'replaced') return `pulse: container ${name} was replaced (a deploy started a new one); its log ended. The new one: ${again}`;
  if (end === 'docker-down') return `pulse: the Docker daemon on ${node} stopped answering; the log of container ${name} ended with it. See: pulse model status --node ${node}`;
  if (end === 'removed') return `pulse: container ${name} was removed (a down, or a deploy's stop: a deploy starts a new one later); its log ended`;
  if (end === 'running') return `pulse: the log of container ${name} closed while it still runs (the Docker daemon ended the stream); ${again} to go on`;
  const code = end.exitCode === null ? '' : `, exit code ${end.exitCode}`;
  return `pulse: container ${name} stopped (${end.status}${code}); its log ended. Why: pulse model status --node ${node}`;
}

/**
 * `--deploy <start-log>`: a start log of one of the node's recipes (`<dir>/logs/pulse-up-<UTC stamp>.log`, or that
 * name alone in the first recipe's logs), such as the failed start a failure block names after its auto-rollback (the
 * node state names the rollback's). Anything else is refused: logs reads start logs, not files.
 */
export function startLogOf(node: NodeConfig, name: string, given: string): string {
  const file = /^pulse-up-\d{8}T\d{6}Z\.log$/;
  const dirs = Object.values(node.recipes).map((r) => r.dir.replace(/\/+$/, ''));
  if (file.test(given) && dirs[0] !== undefined) return `${dirs[0]}/logs/${given}`;
  const cut = given.lastIndexOf('/');
  if (cut > 0 && file.test(given.slice(cut + 1)) && dirs.some((d) => given.slice(0, cut) === `${d}/logs`)) return given;
  throw new PulseError('usage', `--deploy ${given}: not a start log of ${name} (${dirs.map((d) => `${d}/logs/pulse-up-*.log`).join(', ')})`);
}

/** The printer of a read: the source line on stderr (not with --quiet), each log line on stdout. */
function printer(node: string, opts: LogsOptions): LogsSink {
  return {
    source: (s) => {
      if (!opts.quiet) process.stderr.write(`${sourceLine(node, s, opts.follow)}\n`);
    },
    line: (text) => {
      process.stdout.write(`${plainText(text)}\n`);
    },
  };
}

export async function run(opts: LogsOptions): Promise<number> {
  const config = loadNodesConfig(resolveNodesPath(opts.nodes));
  const node = nodeOf(config, opts.node);
  const state = await readNodeState(trustedStateDir(), opts.node);
  const { NodePool } = await import('../../runtime/node/connect.js');
  const pool = new NodePool();
  const ac = new AbortController();
  const onSigint = (): void => ac.abort();
  process.on('SIGINT', onSigint);
  try {
    const deployLog = opts.deployLog === null ? state?.logPath ?? null : startLogOf(node, opts.node, opts.deployLog);
    const req = { source: opts.deploy ? 'deploy' : 'container', tail: opts.tail, follow: opts.follow, deployLog, since: opts.since, timestamps: opts.timestamps } as const;
    const s = await readLogs(pool.session(targetOf(opts.node, node)), node, req, printer(opts.node, opts), ac.signal);
    const why = opts.follow && s.source === 'container' && s.running ? followEndLine(s.name, opts.node, s.ended ?? null) : null;
    if (why !== null && !opts.quiet) process.stderr.write(`${why}\n`);
    return 0;
  } catch (e) {
    if (ac.signal.aborted) return 0; // Ctrl-C is how a follow is meant to end
    throw e;
  } finally {
    process.off('SIGINT', onSigint);
    await pool.closeAll();
  }
}
