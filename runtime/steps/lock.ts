/**
 * The node's deploy lock (runtime/scripts/lock.sh): one lock per recipe dir on the node itself, so two controllers
 * (two Temporal servers, which never see each other's workflow-ID lock) cannot deploy one node at once. The lease
 * is judged by the node's clock only; the controller never compares its own time with the node's.
 */
import type { NodeLock } from '../model/index.js';
import type { NodeSession, PulseRecord } from '../node/types.js';
import { SCRIPT_EXIT } from '../node/types.js';
import { utc } from '../format.js';
import { bool, lastRecord, num, runStep, str } from './run.js';
import type { StepOptions } from './run.js';

/**
 * How long a lock stays live without a renewal (s). The running deploy renews it every LEASE/4 while a step runs and
 * before each step; it outlives a worker crash (30 s heartbeat timeout + a retry) so the resumed deploy finds its
 * own lock, and a killed deploy frees the node within two minutes (Kamal's lock, by contrast, never expires).
 */
export const LOCK_LEASE_S = 120;

export type LockOp = 'acquire' | 'renew' | 'release' | 'show';

/** Who asks: the deploy ID (workflowId/runId) and the controller (worker) host; with the lease in seconds. */
export interface LockOwner {
  deployId: string;
  host: string;
  action: 'up' | 'down';
  leaseS: number;
}

/** Inputs of lock.sh: the recipe dir names the lock, the owner fields what it records. */
export function lockInputs(op: LockOp, recipeDir: string, owner: LockOwner | null): Record<string, string> {
  const base = { PULSE_LOCK_OP: op, PULSE_RECIPE_DIR: recipeDir };
  if (!owner) return base;
  return { ...base, PULSE_LOCK_DEPLOY: owner.deployId, PULSE_LOCK_HOST: owner.host, PULSE_LOCK_ACTION: owner.action, PULSE_LOCK_LEASE_S: String(owner.leaseS) };
}

const iso = (s: number | null): string | null => (s && s > 0 ? utc(s * 1000) : null);

/** The `lock` record as a NodeLock (times as ISO strings of the node's epoch seconds). */
export function lockOf(r: PulseRecord | undefined): NodeLock | null {
  if (!r || !bool(r, 'present')) return null;
  const state = str(r, 'state');
  return {
    state: state === 'held' || state === 'released' ? state : 'released',
    live: bool(r, 'live'),
    deployId: str(r, 'deploy') ?? '',
    host: str(r, 'host') ?? '',
    action: str(r, 'action') ?? '',
    since: iso(num(r, 'since')),
    leaseUntil: iso(num(r, 'until')),
    file: str(r, 'file') ?? '',
    ...(str(r, 'corrupt') ? { corrupt: str(r, 'corrupt') as string } : {}),
    ...(str(r, 'cleared') ? { cleared: str(r, 'cleared') as string } : {}),
  };
}

/**
 * One lock operation. acquire: refused (PulseError 'refused', the holder named) while another deploy's lock is live.
 * renew: refused when the lock is no longer this deploy's. release: a no-op unless this deploy holds it.
 */
export async function nodeLock(session: NodeSession, op: LockOp, recipeDir: string, owner: LockOwner | null, opts?: StepOptions): Promise<NodeLock | null> {
  const result = await runStep(session, 'lock', lockInputs(op, recipeDir, owner), opts, op === 'show' ? [SCRIPT_EXIT.refused] : []);
  return lockOf(lastRecord(result, 'lock'));
}
