/**
 * `rollback --list`: the .env backups on a node (runtime/scripts/backups.sh, read-only), newest first, each with its
 * profile and render time from its pulse header, which one last known good points to and which one the last up
 * wrote, and what happened to the .env it holds (from the node's state here). The script reads header comment lines only, so no secret is ever here.
 */
import { PulseError } from '../errors.js';
import type { NodeConfig } from '../config/nodes.js';
import type { NodeState } from '../model/index.js';
import { failureOf } from '../node/outcome.js';
import type { NodeSession, PulseRecord } from '../node/types.js';
import { recipeLines } from './logs.js';
import { backupMark } from '../state/env-runs.js';

export interface BackupEntry {
  recipe: string;
  /** The file name in the recipe dir (what `rollback --to` takes). */
  name: string;
  path: string;
  /** A regular file; anything else (a symlink, a directory) is listed so it is seen, and a rollback refuses it. */
  regular: boolean;
  /** find's type letter (f, l, d, …) in words when not a regular file. */
  kind: string;
  size: number;
  /** Its modification time (UTC ISO). */
  modified: string;
  /** From its `# pulse-profile:` header line; null when it has none (not written by pulse, or not readable). */
  profile: string | null;
  rendered: string | null;
  /** The backup last known good points to (the node's state). */
  lastKnownGood: boolean;
  /** The backup the last up wrote (the .env it replaced). */
  lastUpWrote: boolean;
  /** What happened to the .env it holds (runtime/state/env-runs.ts: `best: served 22:10Z`), null when unknown here. */
  mark: string | null;
  /** The .env it holds failed (its latest run on the node): a rollback never picks it by default. */
  failed: boolean;
}

const KINDS: Record<string, string> = { f: 'file', l: 'symlink', d: 'directory', p: 'fifo', s: 'socket', c: 'device', b: 'device' };

function entryOf(r: PulseRecord, dirs: ReadonlyMap<string, string>, state: NodeState | null): BackupEntry {
  const s = (k: string): string => (typeof r[k] === 'string' ? (r[k] as string) : '');
  const dir = dirs.get(s('recipe')) ?? '';
  const path = `${dir.replace(/\/+$/, '')}/${s('name')}`;
  const epoch = Number(s('mtime'));
  const mark = backupMark(state, path);
  return {
    recipe: s('recipe'), name: s('name'), path, regular: s('type') === 'f', kind: KINDS[s('type')] ?? s('type'),
    size: typeof r['size'] === 'number' ? r['size'] : 0,
    modified: Number.isFinite(epoch) ? new Date(epoch * 1000).toISOString() : '',
    profile: s('profile') || null, rendered: s('rendered') || null,
    lastKnownGood: state?.lastKnownGood?.backupPath === path, lastUpWrote: state?.backupPath === path,
    mark: mark?.text ?? null, failed: mark?.failed === true,
  };
}

/** Lists the node's backups, newest name first (a backup's name is its UTC stamp). */
export async function listBackups(session: NodeSession, node: NodeConfig, state: NodeState | null): Promise<BackupEntry[]> {
  const records: PulseRecord[] = [];
  const result = await session.run('backups', { env: { PULSE_RECIPES: recipeLines(node, null) }, onRecord: (r) => void records.push(r), keep: () => false });
  if (result.exitCode !== 0) throw failureOf(result);
  if (!records.some((r) => r.kind === 'backups-end')) throw new PulseError('script', `${session.target.name}: backups.sh ended before it listed every backup`);
  const dirs = new Map(Object.entries(node.recipes).map(([n, r]) => [n, r.dir]));
  return records.filter((r) => r.kind === 'backup').map((r) => entryOf(r, dirs, state));
}
