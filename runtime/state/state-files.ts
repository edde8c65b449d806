/**
 * The file primitives under $PULSE_STATE_DIR: atomic replace (temp + fsync + rename + dir fsync) and one
 * O_EXCL lock file per state dir. Readers never lock: a rename is atomic, so a reader sees the old or the new
 * file, never a torn one. Writers lock so that a read-modify-write (the gateway fragment reads every node state)
 * never loses an update made by another process at the same time.
 */
import { closeSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { PulseError } from '../errors.js';
import { pidAlive } from './pid.js';
import { diskError } from './state-disk.js';
import { checkStateDir } from './state-dir.js';

/** A lock older than this is stale even if its pid looks alive (pid reuse, another host): sections take ms. */
const STALE_LOCK_MS = 30_000;
/** How long a writer waits for the lock before it gives up with a clear error. */
const LOCK_WAIT_MS = 60_000;

/** mkdir -p with mode 0700 for every directory it creates (existing directories keep their mode). */
export function ensureDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
}

/** Replace `file` with `text` atomically; mode 0600. A crash leaves the old file or the new one, never half. */
export function writeFileAtomic(file: string, text: string): void {
  try {
    writeAtomic(file, text);
  } catch (err) {
    throw diskError(err, file);
  }
}

function writeAtomic(file: string, text: string): void {
  ensureDir(path.dirname(file));
  const tmp = `${file}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  const fd = openSync(tmp, 'wx', 0o600);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } catch (err) {
    closeSync(fd);
    safeUnlink(tmp);
    throw err;
  }
  closeSync(fd);
  try {
    renameSync(tmp, file);
  } catch (err) {
    safeUnlink(tmp);
    throw err;
  }
  fsyncDir(path.dirname(file));
}

/** Read a file, or null when it does not exist. */
export function readFileOrNull(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

function fsyncDir(dir: string): void {
  // The rename is durable only once the directory entry is on disk.
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function safeUnlink(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    /* already gone */
  }
}

interface LockOwner {
  token: string;
  pid: number;
  host: string;
  at: number;
}

function tryCreateLock(lockFile: string, owner: LockOwner): boolean {
  let fd: number;
  try {
    fd = openSync(lockFile, 'wx', 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw diskError(err, lockFile);
  }
  try {
    writeSync(fd, JSON.stringify(owner));
  } catch (err) {
    // An empty lock (a full disk took the write) would block every writer: it is not a lock, remove it.
    closeSync(fd);
    safeUnlink(lockFile);
    throw diskError(err, lockFile);
  }
  closeSync(fd);
  return true;
}

/** An unreadable lock (empty or torn, e.g. left by a crash between create and write) older than the stale age. */
function unreadableAndOld(lockFile: string, now: number): boolean {
  try {
    return now - statSync(lockFile).mtimeMs > STALE_LOCK_MS;
  } catch {
    return false;
  }
}

function readOwner(lockFile: string): LockOwner | null {
  try {
    return JSON.parse(readFileSync(lockFile, 'utf8')) as LockOwner;
  } catch {
    return null; // gone, or being written right now
  }
}


function isStale(owner: LockOwner, now: number): boolean {
  if (now - owner.at > STALE_LOCK_MS) return true;
  return owner.host === os.hostname() && !pidAlive(owner.pid);
}

/**
 * Break a stale lock without stealing a fresh one: move it aside, check that what we moved is the lock we judged
 * stale, and put it back (link fails if a new lock already exists) when it is not.
 */
function breakStaleLock(lockFile: string, stale: LockOwner): void {
  const aside = `${lockFile}.stale-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    renameSync(lockFile, aside);
  } catch {
    return; // someone else broke it first
  }
  const moved = readOwner(aside);
  if (moved && moved.token !== stale.token) {
    try {
      linkSync(aside, lockFile);
    } catch {
      /* a newer lock exists; the one we moved belonged to a writer that has since finished or will finish */
    }
  }
  safeUnlink(aside);
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Run `fn` while holding the state dir's lock file (`.lock`), so concurrent writers are serialised. Every writer
 * comes here first: a state dir another user owns or can write is refused (state-dir.ts) before anything is written.
 */
export async function withStateLock<T>(stateDir: string, fn: () => T): Promise<T> {
  try {
    checkStateDir(stateDir, { create: true });
  } catch (err) {
    throw diskError(err, path.join(stateDir, '.lock'));
  }
  const lockFile = path.join(stateDir, '.lock');
  const owner: LockOwner = { token: randomBytes(8).toString('hex'), pid: process.pid, host: os.hostname(), at: Date.now() };
  const deadline = Date.now() + LOCK_WAIT_MS;
  let delay = 2;
  for (;;) {
    owner.at = Date.now();
    if (tryCreateLock(lockFile, owner)) break;
    const held = readOwner(lockFile);
    if (held && isStale(held, Date.now())) {
      breakStaleLock(lockFile, held);
      continue;
    }
    if (!held && unreadableAndOld(lockFile, Date.now())) {
      safeUnlink(lockFile);
      continue;
    }
    if (Date.now() > deadline) {
      throw new PulseError('timeout', `state lock ${lockFile} is held by pid ${held?.pid ?? '?'}`, {
        hint: 'another pulse process is writing the state; if none runs, remove the lock file',
      });
    }
    await sleep(delay + Math.random() * delay);
    delay = Math.min(delay * 2, 50);
  }
  try {
    return fn();
  } finally {
    // Remove only our own lock: if it was broken as stale meanwhile, the file belongs to someone else.
    if (readOwner(lockFile)?.token === owner.token) safeUnlink(lockFile);
  }
}
