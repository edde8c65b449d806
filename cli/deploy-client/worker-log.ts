/**
 * Where the workers that pulse runs for the operator write their logs: `$PULSE_STATE_DIR/logs/worker.log`, never
 * the operator's screen (the SDK's `Activity failed` warnings with stacks, the worker's own lines). --verbose also
 * copies them to stderr. A failed deploy's closing block names the file.
 */
import { writeSync } from 'node:fs';
import path from 'node:path';
import type { LogLevel, LogMetadata, Logger } from '@temporalio/common';
import { jsonLine, levelAtLeast, loggerFrom } from '../../worker/logging.js';
import { openPrivateAppend, stateSubdir } from '../../runtime/state/state-dir.js';
import { stateDir } from './temporal.js';

/** The log file of pulse's own workers (the in-process one and the background one). */
export function workerLogPath(dir: string = stateDir()): string {
  return path.join(dir, 'logs', 'worker.log');
}

const opened = new Map<string, number>();

/**
 * Opens the log for appending, once per process (creating `<state>/logs`, owner-only, after the state dir's checks);
 * never through a symbolic link, and only a regular file of the user's own (runtime/state/state-dir.ts); returns its fd.
 */
export function openWorkerLog(file: string = workerLogPath()): number {
  const known = opened.get(file);
  if (known !== undefined) return known;
  const dir = path.dirname(file);
  if (path.basename(dir) === 'logs') stateSubdir(path.dirname(dir), 'logs');
  const fd = openPrivateAppend(file);
  opened.set(file, fd);
  return fd;
}

/**
 * A Temporal SDK Logger that appends JSON lines (worker/logging.ts jsonLine: no task token, errors as name and
 * message) to the worker log at INFO and above, and, when `alsoTo` is given (--verbose), writes them there too.
 */
export function fileLogger(fd: number, alsoTo: { write(s: string): unknown } | null = null): Logger {
  const log = (level: LogLevel, message: string, meta?: LogMetadata): void => {
    if (!levelAtLeast(level, 'INFO')) return;
    const line = `${jsonLine(level, message, meta)}\n`;
    try {
      writeSync(fd, line);
    } catch {
      // a full or vanished state disk must not break the deploy this worker runs
    }
    alsoTo?.write(line);
  };
  return loggerFrom(log);
}
