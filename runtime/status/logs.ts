/**
 * `logs`: a node's container log or a deploy's start log, read by runtime/scripts/logs.sh over the node's session.
 * The node redacts API_KEY/HF_TOKEN values (prelude.sh pulse_redact_output) before a line leaves it, so what
 * arrives here is safe to print. Read-only; a follow ends when the container stops or the signal aborts.
 */
import { PulseError } from '../errors.js';
import { failureOf } from '../node/outcome.js';
import type { NodeConfig } from '../config/nodes.js';
import type { NodeSession, PulseRecord } from '../node/types.js';

export interface LogsRequest {
  source: 'container' | 'deploy';
  /** The last N lines, or null for all. */
  tail: number | null;
  follow: boolean;
  /** The start log the node state names (deploy only); null: the newest logs/pulse-up-*.log on the node. */
  deployLog: string | null;
  /** Container only: docker logs --since, as `<seconds>s` or a UTC time (cli: logsSince); null: from the start. */
  since?: string | null;
  /** Container only: each line with docker's RFC 3339 time stamp in front. */
  timestamps?: boolean;
}

/** Why a follow ended (logs.sh's log-end record), null when the read was no follow. */
export type FollowEnd = 'removed' | 'replaced' | 'running' | 'docker-down' | { status: string; exitCode: number | null } | null;

/** logs.sh's `ended` value in words of its own kind. */
export function followEndOf(v: unknown): FollowEnd {
  if (typeof v !== 'string' || v === '') return null;
  if (v === 'removed' || v === 'replaced' || v === 'running' || v === 'docker-down') return v;
  const [status = v, code] = v.split(':');
  const n = code !== undefined && /^-?\d+$/.test(code) ? Number(code) : null;
  return { status, exitCode: n };
}

/** What was read: the container (or start log) and its state when the read began. */
export interface LogsSource {
  source: 'container' | 'deploy';
  recipe: string;
  /** The container name, or the start log's path. */
  name: string;
  running: boolean;
  /** docker's state word of the recipe's container (`absent` when there is none). */
  status: string;
  /** Why a follow of the container's log ended; null for a read that was no follow (set when the read ends). */
  ended?: FollowEnd;
}

/** The recipes of a node, the one whose dir holds `preferDir` first (so the last deploy's recipe is read first). */
export function recipeLines(node: NodeConfig, preferPath: string | null): string {
  const all = Object.entries(node.recipes);
  const first = preferPath ? all.filter(([, r]) => preferPath.startsWith(`${r.dir.replace(/\/+$/, '')}/`)) : [];
  const ordered = [...first, ...all.filter((e) => !first.includes(e))];
  return ordered.map(([n, r]) => `${n}\t${r.dir}\t${r.container}`).join('\n');
}

function sourceOf(r: PulseRecord): LogsSource {
  const s = (k: string): string => (typeof r[k] === 'string' ? (r[k] as string) : '');
  return { source: s('source') === 'deploy' ? 'deploy' : 'container', recipe: s('recipe'), name: s('name'), running: r['running'] === true, status: s('status') || 'absent' };
}

/** Who sees a read as it goes: what is read (before its first line), then each line as it arrives. */
export interface LogsSink {
  source(s: LogsSource): void;
  line(text: string): void;
}

/** Reads the log into `sink`; resolves with its source once the read ends (a follow: the container stopped). */
export async function readLogs(session: NodeSession, node: NodeConfig, req: LogsRequest, sink: LogsSink, signal?: AbortSignal): Promise<LogsSource> {
  let source: LogsSource | null = null;
  const env: Record<string, string> = {
    PULSE_RECIPES: recipeLines(node, req.deployLog),
    PULSE_LOG_SOURCE: req.source,
    PULSE_LOG_TAIL: req.tail === null ? 'all' : String(req.tail),
    PULSE_LOG_FOLLOW: req.follow ? '1' : '0',
    PULSE_LOG_PATH: req.source === 'deploy' ? (req.deployLog ?? '') : '',
    PULSE_LOG_SINCE: req.since ?? '',
    PULSE_LOG_TIMESTAMPS: req.timestamps === true ? '1' : '0',
  };
  let ended: FollowEnd = null;
  const onRecord = (r: PulseRecord): void => {
    if (r.kind === 'log-source') sink.source((source = sourceOf(r)));
    else if (r.kind === 'log' && typeof r['line'] === 'string') sink.line(r['line']);
    else if (r.kind === 'log-end') ended = followEndOf(r['ended']);
  };
  const result = await session.run('logs', { env, onRecord, keep: (r) => r.kind !== 'log', ...(signal ? { signal } : {}) });
  if (result.exitCode !== 0) throw failureOf(result);
  if (!source) throw new PulseError('script', `${session.target.name}: logs.sh reported no log source`);
  return { ...(source as LogsSource), ended };
}
