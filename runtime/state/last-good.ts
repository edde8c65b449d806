/**
 * Last known good (issue 14 item 3): the identity, profile, time and backup of the last verified up of a node, kept
 * in its state file (nodes/<node>.json) by the publish step. Pure: the state writer calls nextLastKnownGood with
 * the old state and the new one.
 *
 * - A verified up (state `up`, after verify) becomes the last known good; its .env is the live file (no backup).
 * - A later up that does not verify keeps it. When that up backed up the file that was live, and that file was
 *   the last known good's (same identity as preflight saw), the backup now holds its exact bytes: `backupPath`.
 * - A down keeps it: the .env stays on the node.
 */
import type { EnvIdentity, LastKnownGood, NodeState } from '../model/index.js';
import { sameIdentity } from '../config/env-header.js';

/** What the publish step knows about the write it reports. */
export interface StateChange {
  state: NodeState['state'];
  action: NodeState['action'];
  profile: string | null;
  identity: EnvIdentity | null;
  /** The backup this deploy wrote of the .env that was live before it, if any. */
  backupPath: string | null;
  /** The identity of that .env, as the deploy's preflight read it (null: unknown or not a pulse .env). */
  previousIdentity: EnvIdentity | null;
}


/** The last known good after `change` is written over `old` (at `at`, by workflow `workflowId`). */
export function nextLastKnownGood(old: NodeState | null, change: StateChange, at: string, workflowId: string | null): LastKnownGood | null {
  const kept = old?.lastKnownGood ?? null;
  if (change.action === 'up' && change.state === 'up' && change.profile !== null && change.identity !== null) {
    // The same identity verified again (a same-identity up) keeps the first time it verified.
    if (kept && kept.backupPath === null && sameIdentity(kept.identity, change.identity)) return kept;
    return { profile: change.profile, identity: change.identity, at, workflowId, backupPath: null };
  }
  if (!kept) return null;
  if (kept.backupPath === null && change.backupPath !== null && sameIdentity(kept.identity, change.previousIdentity)) {
    return { ...kept, backupPath: change.backupPath };
  }
  return kept;
}

/** The backup path pruning must keep for a node: the one the last known good points to, if any. */
export function protectedBackup(state: NodeState | null): string | null {
  return state?.lastKnownGood?.backupPath ?? null;
}
