/**
 * The read-only step of a rollback's plan: the backup's public text (and the live .env's), every line that names a
 * secret replaced by a marker on the node (prelude.sh pulse_env_public). A backup that is no file as pulse writes them
 * (a symbolic link, another owner, writable by others) or holds a secret line pulse cannot carry is refused here,
 * --force or not, before anything on the node changes; the refusal names the line number and key, never a line.
 */
import { PulseError } from '../errors.js';
import type { NodeSession } from '../node/types.js';
import { readBackupInputs } from './inputs.js';
import { bool, lastRecord, num, recordsOf, runStep, str } from './run.js';
import type { StepOptions } from './run.js';

export interface BackupRead {
  /** The backup's public text: its secret lines replaced by markers (they stay on the node). */
  text: string;
  /** How many secret lines the backup holds (restored with it, never read off the node). */
  secretLines: number;
  /** The live .env the same way, or null when there is none. */
  current: string | null;
}

const decode = (b64: string | null): string => Buffer.from(b64 ?? '', 'base64').toString('utf8');

/** Reads `backup` and the live .env at `envPath` on the node; a missing backup is a precondition failure, an unsafe one a refusal. */
export async function readBackup(session: NodeSession, backup: string, envPath: string, opts?: StepOptions): Promise<BackupRead> {
  const result = await runStep(session, 'read-backup', readBackupInputs(backup, envPath), opts);
  const b = lastRecord(result, 'backup');
  const c = lastRecord(result, 'current');
  if (!b || !bool(b, 'exists')) throw new PulseError('precondition', `${session.target.name}: backup ${backup} is not there (or not readable)`);
  const refused = str(b, 'refused');
  if (refused) throw new PulseError('refused', `backup ${backup}: ${refused}; pulse never restores it, --force or not; nothing was stopped`);
  const problems = recordsOf(result, 'problem').map((p) => `${backup}:${num(p, 'line') ?? '?'}: ${str(p, 'key') ?? '?'}: ${str(p, 'why') ?? ''}`);
  if (problems.length > 0) {
    throw new PulseError('refused', `backup ${backup}: a secret line pulse cannot carry (preflight's secret check), --force or not; nothing was stopped: ${problems.join('; ')}`, {
      hint: "write each HF_TOKEN/API_KEY line as KEY='value' on one line, or roll back to another backup",
    });
  }
  return { text: decode(str(b, 'b64')), secretLines: num(b, 'secretLines') ?? 0, current: c && bool(c, 'exists') ? decode(str(c, 'b64')) : null };
}
