/**
 * The worker's log lines, on stderr like every pulse worker line before them: one JSON object per line when stderr
 * is not a TTY (journald, docker logs, a log shipper), plain text on a terminal. stdout stays free for a command's
 * own output. The same sink serves the Temporal SDK (Runtime.install({ logger }): worker lifecycle,
 * workflow logs with their workflowId) and the activities (through the activity's own context logger, which adds
 * workflowId, activityType and attempt to every line).
 *
 * No secret reaches these lines: activity inputs are secret-free plan data, and error messages are redacted at the
 * activity edge (activities/errors.ts) before they are logged or recorded.
 */
import { Context } from '@temporalio/activity';
import type { LogLevel, LogMetadata, Logger } from '@temporalio/common';
import type { ActivityLogger } from '../activities/deps.js';

const RANK: Record<LogLevel, number> = { TRACE: 0, DEBUG: 1, INFO: 2, WARN: 3, ERROR: 4 };

/** Metadata left out of every line: the activity task token is opaque, long, and of no use to a reader. */
const DROPPED = new Set(['taskToken']);

/** Fields that identify the work a line is about, printed first in text mode. */
const TEXT_KEYS = ['workflowId', 'activityType', 'attempt'] as const;

export interface LineLoggerOptions {
  /** JSON lines (default: when `stream` is not a TTY). */
  json?: boolean;
  /** Lowest level written (default INFO; PULSE_LOG_LEVEL in `pulse worker`). */
  level?: LogLevel;
  /** Default process.stderr. */
  stream?: NodeJS.WritableStream & { isTTY?: boolean };
}

/** The level named by `value` (case-insensitive), else `fallback`. */
export function parseLevel(value: string | undefined, fallback: LogLevel = 'INFO'): LogLevel {
  const v = (value ?? '').toUpperCase();
  return v in RANK ? (v as LogLevel) : fallback;
}

function plain(value: unknown): unknown {
  if (value instanceof Error) return { name: value.name, message: value.message };
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof Uint8Array) return undefined; // task tokens: opaque bytes, noise in a log
  return value;
}

/** The JSON text of one line: time, level, msg, then the metadata (errors reduced to name + message). */
export function jsonLine(level: LogLevel, message: string, meta: LogMetadata | undefined, now = new Date()): string {
  const entry: Record<string, unknown> = { time: now.toISOString(), level, msg: message };
  for (const [k, v] of Object.entries(meta ?? {})) if (!(k in entry) && !DROPPED.has(k)) entry[k] = v;
  return JSON.stringify(entry, (_k, v: unknown) => plain(v));
}

function textLine(level: LogLevel, message: string, meta: LogMetadata | undefined, now = new Date()): string {
  const m = meta ?? {};
  const ids = TEXT_KEYS.filter((k) => m[k] !== undefined).map((k) => `${k}=${String(plain(m[k]))}`);
  const err = m['error'] instanceof Error ? ` (${m['error'].message})` : '';
  return `${now.toISOString()} ${level.padEnd(5)} ${message}${err}${ids.length ? ` [${ids.join(' ')}]` : ''}`;
}

/** True when `level` is at or above `min` (TRACE < DEBUG < INFO < WARN < ERROR). */
export function levelAtLeast(level: LogLevel, min: LogLevel): boolean {
  return RANK[level] >= RANK[min];
}

/** A Logger whose level methods all go through one `log` function. */
export function loggerFrom(log: (level: LogLevel, message: string, meta?: LogMetadata) => void): Logger {
  return {
    log,
    trace: (m, meta) => log('TRACE', m, meta),
    debug: (m, meta) => log('DEBUG', m, meta),
    info: (m, meta) => log('INFO', m, meta),
    warn: (m, meta) => log('WARN', m, meta),
    error: (m, meta) => log('ERROR', m, meta),
  };
}

/** A Temporal SDK Logger writing one line per entry (JSON or text, see the module comment). */
export function lineLogger(opts: LineLoggerOptions = {}): Logger {
  const stream = opts.stream ?? process.stderr;
  const json = opts.json ?? !stream.isTTY;
  const min = RANK[opts.level ?? 'INFO'];
  const log = (level: LogLevel, message: string, meta?: LogMetadata): void => {
    if (RANK[level] < min) return;
    stream.write(`${json ? jsonLine(level, message, meta) : textLine(level, message, meta)}\n`);
  };
  return loggerFrom(log);
}

/**
 * The SDK warns "No workflows registered" for every activity-only Worker: the gateway Worker is one on purpose,
 * so that line (and only for that queue) is dropped rather than alarm an operator on every start.
 */
export function withoutGatewayNotice(logger: Logger, gatewayQueue: string): Logger {
  const expected = (message: string, meta?: LogMetadata): boolean => message.startsWith('No workflows registered') && meta?.['taskQueue'] === gatewayQueue;
  const log = (level: LogLevel, message: string, meta?: LogMetadata): void => {
    if (!expected(message, meta)) logger.log(level, message, meta);
  };
  return loggerFrom(log);
}

/** Inside an activity: the activity's context logger (adds workflowId, activityType, attempt...); else null. */
function activityContextLogger(): Logger | null {
  try {
    return Context.current().log;
  } catch {
    return null; // not running inside an activity
  }
}

/**
 * The ActivityLogger of the activities and of the worker itself: inside an activity it logs through the
 * activity's context (so each line carries the workflow ID); outside, straight to `base`.
 */
export function workerLogger(base: Logger): ActivityLogger & { error(message: string, meta?: Record<string, unknown>): void } {
  const to = (): Logger => activityContextLogger() ?? base;
  return {
    info: (m, meta) => to().info(m, meta),
    warn: (m, meta) => to().warn(m, meta),
    error: (m, meta) => to().error(m, meta),
  };
}
