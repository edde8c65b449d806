/**
 * Who may touch the state dir. Everything pulse trusts on the controller lives under $PULSE_STATE_DIR: the
 * embedded server's `temporal/server.json` (which server every command talks to), the background worker's record
 * and log, the node states and the gateway file. A directory another local user owns or can write lets that user
 * point root's commands at their own Temporal server, or root's log at a file of their choosing (issue 27, item 3).
 *
 * So the state dir and its `temporal/`, `logs/` and `nodes/` must belong to the effective user and be writable by
 * nobody else (each subdirectory a real directory, not a symbolic link), and every directory above it must belong
 * to root or the user and be writable by nobody else unless sticky (as /tmp is), and every symbolic link on the
 * way must be root's or the user's: otherwise another user could move the state dir away (or re-point the link)
 * and put their own in its place. A directory pulse creates is made 0700 explicitly (whatever
 * the umask); one it did not create is never changed, only refused, with one line that says how to fix it.
 * The files pulse keeps there are opened without following symbolic links and must be regular files of the
 * user's own (`openPrivateAppend`, `readPrivateFile`).
 */
import { chmodSync, closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readFileSync, realpathSync, statSync, type Stats } from 'node:fs';
import path from 'node:path';
import { PulseError } from '../errors.js';

/** The subdirectories pulse keeps in the state dir; each one that exists is checked like the state dir. */
export const STATE_SUBDIRS = ['temporal', 'logs', 'nodes'] as const;
export type StateSubdir = (typeof STATE_SUBDIRS)[number];

/** The effective uid, or null where there is none (Windows): then nothing is checked. */
function euid(): number | null {
  return typeof process.geteuid === 'function' ? process.geteuid() : null;
}

/** "name (uid N)" from /etc/passwd, or "uid N". */
export function userOf(uid: number): string {
  try {
    const line = readFileSync('/etc/passwd', 'utf8').split('\n').find((l) => l.split(':')[2] === String(uid));
    const name = line?.split(':')[0];
    return name ? `${name} (uid ${uid})` : `uid ${uid}`;
  } catch {
    return `uid ${uid}`;
  }
}

const mode = (st: Stats): string => (st.mode & 0o7777).toString(8).padStart(4, '0');

function refuse(message: string): never {
  throw new PulseError('refused', message);
}

/** mkdir -p that returns the directories it created, each chmod 0700 (the umask or a default ACL cannot widen it). */
function createChain(dir: string): Set<string> {
  const missing: string[] = [];
  for (let d = dir; ; d = path.dirname(d)) {
    try {
      statSync(d);
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || path.dirname(d) === d) break;
      missing.unshift(d);
    }
  }
  const created = new Set<string>();
  for (const d of missing) {
    try {
      mkdirSync(d, { mode: 0o700 });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') continue; // another process made it: judged as found
      throw e;
    }
    chmodSync(d, 0o700);
    created.add(d);
  }
  return created;
}

/** A directory above the state dir: root's or the user's, and writable by nobody else unless sticky. */
function checkAncestor(dir: string, stateDir: string, me: number): void {
  let st: Stats;
  try {
    st = statSync(dir);
  } catch {
    return; // vanished meanwhile: the state dir's own check decides
  }
  if (st.uid !== 0 && st.uid !== me) {
    refuse(`state dir ${stateDir}: the directory above it, ${dir}, belongs to ${userOf(st.uid)}, who could replace the state dir: use a state dir under a directory of your own or root's (set PULSE_STATE_DIR)`);
  }
  if ((st.mode & 0o022) !== 0 && (st.mode & 0o1000) === 0) {
    refuse(`state dir ${stateDir}: the directory above it, ${dir}, is writable by group or others (mode ${mode(st)}), who could replace the state dir: run \`chmod go-w ${dir}\`, or use another state dir (set PULSE_STATE_DIR)`);
  }
}

/** One directory pulse keeps its files in: the user's own, writable by nobody else; repaired when pulse made it. */
function checkOwnDir(dir: string, st: Stats, me: number, created: Set<string>, what: string): void {
  if (!st.isDirectory()) refuse(`${what} ${dir} is not a directory: remove it (pulse creates it, mode 0700)`);
  if (st.uid !== me) {
    refuse(`${what} ${dir} belongs to ${userOf(st.uid)}, not to you (${userOf(me)}), so that user could run your deploys: use a directory of your own (unset PULSE_STATE_DIR, or point it at a new path: pulse creates it, mode 0700)`);
  }
  if ((st.mode & 0o022) === 0) return;
  if (created.has(dir)) {
    chmodSync(dir, 0o700);
    return;
  }
  refuse(`${what} ${dir} is writable by group or others (mode ${mode(st)}), so another local user could plant files there: run \`chmod go-w ${dir}\` (pulse makes its directories 0700)`);
}

/**
 * Checks the state dir (and creates it, 0700, when `create`): throws PulseError('refused') with one line saying how
 * to fix it. A state dir that does not exist (and is not to be created) passes: there is nothing to trust yet.
 */
export function checkStateDir(dir: string, opts: { create?: boolean; subdir?: StateSubdir } = {}): void {
  const me = euid();
  const abs = path.resolve(dir);
  let created = new Set<string>();
  if (opts.create || opts.subdir) created = createChain(opts.subdir ? path.join(abs, opts.subdir) : abs);
  if (me === null) return;
  let st: Stats;
  try {
    st = statSync(abs); // the operator may name a symbolic link to the directory: its target is judged
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw e;
  }
  checkOwnDir(abs, st, me, created, 'state dir');
  const above = new Set<string>();
  for (const start of [abs, realpathSync(abs)]) {
    for (let d = path.dirname(start); ; d = path.dirname(d)) {
      above.add(d);
      if (path.dirname(d) === d) break;
    }
  }
  for (const d of above) checkAncestor(d, abs, me);
  // A link on the way is the link owner's to replace (in a sticky /tmp too): only root's or the user's are followed.
  for (let d = abs; path.dirname(d) !== d; d = path.dirname(d)) {
    let l: Stats;
    try {
      l = lstatSync(d);
    } catch {
      continue;
    }
    if (l.isSymbolicLink() && l.uid !== 0 && l.uid !== me) {
      refuse(`state dir ${abs}: ${d} is a symbolic link of ${userOf(l.uid)}, who could point it elsewhere: use the directory it names, or a state dir of your own (set PULSE_STATE_DIR)`);
    }
  }
  for (const sub of STATE_SUBDIRS) {
    const p = path.join(abs, sub);
    let s: Stats;
    try {
      s = lstatSync(p);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw e;
    }
    if (s.isSymbolicLink()) refuse(`${p} is a symbolic link: pulse keeps its files only in a real directory of its own; remove it (pulse creates it, mode 0700)`);
    checkOwnDir(p, s, me, created, 'state dir folder');
  }
}

/** `<state>/<sub>`, created (0700) when missing, after the state dir and its folders passed checkStateDir. */
export function stateSubdir(stateDir: string, sub: StateSubdir): string {
  checkStateDir(stateDir, { subdir: sub });
  return path.join(path.resolve(stateDir), sub);
}

/** A file pulse opened for its own use must be a regular file of the user's own, with one name (no hard link). */
function checkPrivateFile(fd: number, file: string): void {
  const st = fstatSync(fd);
  const me = euid();
  const why = !st.isFile()
    ? 'is not a regular file'
    : me !== null && st.uid !== me
      ? `belongs to ${userOf(st.uid)}`
      : st.nlink > 1
        ? `has ${st.nlink} hard links`
        : (st.mode & 0o022) !== 0
          ? `is writable by group or others (mode ${mode(st)})`
          : null;
  if (why === null) return;
  closeSync(fd);
  refuse(`${file} ${why}: pulse writes and reads its own files only; remove it (pulse creates it again, mode 0600)`);
}

function openNoFollow(file: string, flags: number): number {
  try {
    // O_NONBLOCK: a FIFO planted in the file's place can neither block the open nor pass the regular-file check.
    return openSync(file, flags | constants.O_NOFOLLOW | constants.O_NONBLOCK, 0o600);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ELOOP' || code === 'EMLINK') refuse(`${file} is a symbolic link: pulse never follows one for its own files; remove it (pulse creates the file again, mode 0600)`);
    if (code === 'ENXIO') refuse(`${file} is not a regular file: remove it (pulse creates the file again, mode 0600)`);
    throw e;
  }
}

/**
 * Opens a log or record file of pulse's own for appending (created 0600), never through a symbolic link: a link, a
 * FIFO, a device, another user's file or a hard link is refused with one line. Returns the fd.
 */
export function openPrivateAppend(file: string): number {
  const fd = openNoFollow(file, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT);
  checkPrivateFile(fd, file);
  return fd;
}

/** Reads a file of pulse's own (as openPrivateAppend judges it); null when it does not exist. */
export function readPrivateFile(file: string): string | null {
  let fd: number;
  try {
    fd = openNoFollow(file, constants.O_RDONLY);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
  checkPrivateFile(fd, file);
  try {
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
}
