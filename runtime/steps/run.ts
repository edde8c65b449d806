/** Shared plumbing of the step functions: run a step script, classify its exit, pick records out. */
import { ensureOk } from '../node/outcome.js';
import type { NodeSession, PulseRecord, RemoteResult, StepName } from '../node/types.js';

/** Per-call options of every step function (cancellation and live records for heartbeats / --verbose). */
export interface StepOptions {
  signal?: AbortSignal;
  onRecord?: (record: PulseRecord) => void;
}

/** Run one step; documented failure exits become PulseErrors unless listed in `accept`. */
export async function runStep(
  session: NodeSession,
  step: StepName,
  env: Record<string, string>,
  opts: StepOptions = {},
  accept: number[] = [],
): Promise<RemoteResult> {
  const result = await session.run(step, { env, ...opts });
  if (result.exitCode !== null && accept.includes(result.exitCode)) return result;
  return ensureOk(result);
}

/** All records of one kind. */
export function recordsOf(result: RemoteResult, kind: string): PulseRecord[] {
  return result.records.filter((r) => r.kind === kind);
}

/** The last record of one kind, or undefined. */
export function lastRecord(result: RemoteResult, kind: string): PulseRecord | undefined {
  const all = recordsOf(result, kind);
  return all[all.length - 1];
}

/** A string field of a record, or null. */
export function str(r: PulseRecord | undefined, key: string): string | null {
  const v = r?.[key];
  return typeof v === 'string' ? v : null;
}

/** A finite number field of a record (numbers or numeric strings), or null. */
export function num(r: PulseRecord | undefined, key: string): number | null {
  const v = r?.[key];
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
  return Number.isFinite(n) ? n : null;
}

/** A boolean field (true, "true", "1"). */
export function bool(r: PulseRecord | undefined, key: string): boolean {
  const v = r?.[key];
  return v === true || v === 'true' || v === '1' || v === 1;
}
