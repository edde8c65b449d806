/**
 * A full disk under $PULSE_STATE_DIR, said once and plainly: which directory, "no space left on device". The state
 * writers wrap their ENOSPC/EDQUOT into it (so a retried state step shows it on the progress line), and the CLI
 * checks the disk before it starts a deploy and again when the Temporal server refuses one (the embedded server's
 * SQLite lives there too, and would only say `Failed to start Workflow`).
 */
import { existsSync, statfsSync } from 'node:fs';
import path from 'node:path';
import { PulseError } from '../errors.js';

/** errno codes that mean "the disk is full", not "this file is wrong". */
const FULL = new Set(['ENOSPC', 'EDQUOT']);
/** Below this much free space the embedded server's database and the state files can no longer be written. */
export const MIN_FREE_BYTES = 1024 * 1024;

/** `err` as a state-disk PulseError when it is a full-disk errno, else `err` unchanged. */
export function diskError(err: unknown, file: string): unknown {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  if (typeof code !== 'string' || !FULL.has(code)) return err;
  return new PulseError('internal', `state disk full: no space left on device in ${path.dirname(file)} (${code} writing ${path.basename(file)})`, {
    hint: 'free space there, or point PULSE_STATE_DIR at another disk; the deploy retries the state write for a while',
    cause: err,
  });
}

/** Why the state dir cannot take writes (free space under MIN_FREE_BYTES), or null; a missing dir is fine. */
export function stateDiskProblem(dir: string): string | null {
  let d = path.resolve(dir);
  while (!existsSync(d) && path.dirname(d) !== d) d = path.dirname(d);
  try {
    const s = statfsSync(d);
    const free = s.bavail * s.bsize;
    if (free >= MIN_FREE_BYTES) return null;
    return `state dir ${dir}: no space left on device (${Math.floor(free / 1024)} KiB free)`;
  } catch {
    return null;
  }
}
