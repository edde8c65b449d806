/**
 * What happened to the .env files a node ran, and which .env each backup holds, kept in its state file by the state
 * writer (activities/publish.ts), so `rollback` can mark a backup (served / failed at readiness / undone since) in
 * `--list`, in its dry-run and in its default choice, and never picks by default an .env that failed. Pure.
 *
 * - A verified up (state `up`) records its .env's identity as served; every failed .env not yet undone is undone by
 *   it (another .env serves again: the auto-rollback, a rollback, the next up).
 * - A failed up whose start ran (it has a start log) records its .env as failed, at the step that failed.
 * - A deploy that backed up the live .env records which identity the backup holds (preflight read it).
 */
import type { NodeState } from '../model/index.js';
import type { StateChange } from './last-good.js';

/** How many .env runs and backups a state file keeps (newest first): the rollback looks back a few deploys. */
const KEEP = 12;

/** What the state writer knows of the write it reports: last known good's, and the start log and error. */
export interface EnvRunChange extends StateChange {
  logPath: string | null;
  error: string | null;
}

/** The .env runs and backups after `change` is written over `old` at `at`. */
export function nextEnvRuns(old: Pick<NodeState, 'envRuns' | 'backupsOf'> | null, change: EnvRunChange, at: string): Pick<NodeState, 'envRuns' | 'backupsOf'> {
  // The state file is read back as written; an older or hand-edited one may lack them (or hold something else).
  let runs = Array.isArray(old?.envRuns) ? [...old.envRuns] : [];
  let backups = Array.isArray(old?.backupsOf) ? [...old.backupsOf] : [];
  const prev = change.previousIdentity;
  if (change.backupPath !== null && prev !== null && !backups.some((b) => b.path === change.backupPath)) {
    backups = [{ path: change.backupPath, sha256: prev.sha256, profile: prev.profile }, ...backups].slice(0, KEEP);
  }
  const id = change.identity;
  if (change.action === 'up' && id !== null) {
    if (change.state === 'up') {
      runs = runs.map((r) => (r.outcome === 'failed' && r.undoneAt === undefined && r.sha256 !== id.sha256 ? { ...r, undoneAt: at, undoneBy: id.profile } : r));
      runs = [{ sha256: id.sha256, profile: id.profile, outcome: 'served' as const, at, step: null }, ...runs.filter((r) => r.sha256 !== id.sha256)].slice(0, KEEP);
    } else if (change.state === 'failed' && change.logPath !== null) {
      const step = /^([a-z-]+): /.exec(change.error ?? '')?.[1] ?? null;
      runs = [{ sha256: id.sha256, profile: id.profile, outcome: 'failed' as const, at, step }, ...runs.filter((r) => r.sha256 !== id.sha256)].slice(0, KEEP);
    }
  }
  return { envRuns: runs, backupsOf: backups };
}

/** What happened to the .env a backup holds, as the state file knows it (null: not a backup it recorded). */
export interface BackupMark {
  profile: string;
  failed: boolean;
  /** `served 22:10Z`, `failed at readiness 22:19Z, undone 22:20Z (best serves again)`. */
  text: string;
}

const hhmm = (iso: string): string => `${iso.slice(11, 16)}Z`;

/** The mark of the backup at `path`, or null when the state file does not know what it holds. */
export function backupMark(state: Pick<NodeState, 'envRuns' | 'backupsOf'> | null, path: string): BackupMark | null {
  const b = Array.isArray(state?.backupsOf) ? state.backupsOf.find((x) => x.path === path) : undefined;
  if (!b) return null;
  const r = Array.isArray(state?.envRuns) ? state.envRuns.find((x) => x.sha256 === b.sha256) : undefined;
  if (!r) return { profile: b.profile, failed: false, text: `${b.profile}: no outcome recorded` };
  if (r.outcome === 'served') return { profile: b.profile, failed: false, text: `${b.profile}: served ${hhmm(r.at)}` };
  const undone = r.undoneAt ? `, undone ${hhmm(r.undoneAt)} (${r.undoneBy ?? '?'} served again)` : '';
  return { profile: b.profile, failed: true, text: `${b.profile}: failed${r.step ? ` at ${r.step}` : ''} ${hhmm(r.at)}${undone}` };
}
