/** Processes by pid: is one alive, and the pid lock file (one holder at a time, taken over when its holder died). */
import { statSync } from 'node:fs';
import { link, rm, writeFile } from 'node:fs/promises';
import { readPrivateFile } from './state-dir.js';

/** True while a process with this pid exists (EPERM: it exists but belongs to someone else). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The uid that owns process `pid` (the owner of /proc/<pid>), or null when it is gone or there is no procfs. A pid
 * read from a file is trusted only when this is the effective uid: another user's process is never "ours".
 */
export function pidOwner(pid: number): number | null {
  try {
    return statSync(`/proc/${pid}`).uid;
  } catch {
    return null;
  }
}

/** True while `pid` lives and belongs to the effective user (where procfs can tell; elsewhere: while it lives). */
export function ownPidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0 || !pidAlive(pid)) return false;
  const me = typeof process.geteuid === 'function' ? process.geteuid() : null;
  const owner = pidOwner(pid);
  return me === null || owner === null ? !hasProcfs() : owner === me;
}

function hasProcfs(): boolean {
  try {
    statSync('/proc/self');
    return true;
  } catch {
    return false;
  }
}

/** One try at a pid lock: the release when this process now holds it, else the holder (null: none could be read). */
export type PidLockTry = { release: () => Promise<void> } | { holder: number | null };

/** Creates the lock with our pid already in it (a link of a written file), so no reader ever sees it empty. */
async function create(file: string): Promise<boolean> {
  const tmp = `${file}.${process.pid}.tmp`;
  await rm(tmp, { force: true }); // a leftover of a pid reused: 'wx' (O_EXCL) never writes through a planted link
  await writeFile(tmp, String(process.pid), { mode: 0o600, flag: 'wx' });
  try {
    await link(tmp, file);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw e;
  } finally {
    await rm(tmp, { force: true });
  }
}

/** The pid in the lock file, read without following a link (a link, another user's file: no holder, so it is replaced). */
async function holderOf(file: string): Promise<number | null> {
  let text: string | null = null;
  try {
    text = readPrivateFile(file);
  } catch {
    text = null;
  }
  const n = Number(text ?? '');
  return Number.isInteger(n) && n > 0 ? n : null;
}

/**
 * One try at the exclusive lock file `file`, which holds its holder's pid. A lock whose holder is gone (or that holds
 * no pid) is removed and taken once; no waiting: each caller keeps its own deadline and retry policy.
 */
export async function tryPidLock(file: string): Promise<PidLockTry> {
  const taken: PidLockTry = { release: () => rm(file, { force: true }) };
  if (await create(file)) return taken;
  const holder = await holderOf(file);
  if (holder !== null && ownPidAlive(holder)) return { holder };
  await rm(file, { force: true });
  return (await create(file)) ? taken : { holder: await holderOf(file) };
}
