/** The read-only step of a rollback's plan: the backup's text (and the live .env's) without their secret lines. */
import { PulseError } from '../errors.js';
import type { NodeSession } from '../node/types.js';
import { readBackupInputs } from './inputs.js';
import { bool, lastRecord, num, runStep, str } from './run.js';
import type { StepOptions } from './run.js';

export interface BackupRead {
  /** The backup without its HF_TOKEN/API_KEY lines (they stay on the node). */
  text: string;
  /** How many secret lines the backup holds (restored with it, never read off the node). */
  secretLines: number;
  /** The live .env the same way, or null when there is none. */
  current: string | null;
}

const decode = (b64: string | null): string => Buffer.from(b64 ?? '', 'base64').toString('utf8');

/** Reads `backup` and the live .env at `envPath` on the node; a missing backup is a precondition failure. */
export async function readBackup(session: NodeSession, backup: string, envPath: string, opts?: StepOptions): Promise<BackupRead> {
  const result = await runStep(session, 'read-backup', readBackupInputs(backup, envPath), opts);
  const b = lastRecord(result, 'backup');
  const c = lastRecord(result, 'current');
  if (!b || !bool(b, 'exists')) throw new PulseError('precondition', `${session.target.name}: backup ${backup} is not there (or not readable)`);
  return { text: decode(str(b, 'b64')), secretLines: num(b, 'secretLines') ?? 0, current: c && bool(c, 'exists') ? decode(str(c, 'b64')) : null };
}
