/** Processes by pid: is one alive, and the pid lock file (one holder at a time, taken over when its holder died). */
import { link, readFile, rm, writeFile } from 'node:fs/promises';

/** True while a process with this pid exists (EPERM: it exists but belongs to someone else). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** One try at a pid lock: the release when this process now holds it, else the holder (null: none could be read). */
export type PidLockTry = { release: () => Promise<void> } | { holder: number | null };

/** Creates the lock with our pid already in it (a link of a written file), so no reader ever sees it empty. */
async function create(file: string): Promise<boolean> {
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, String(process.pid), { mode: 0o600 });
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

async function holderOf(file: string): Promise<number | null> {
  const n = Number(await readFile(file, 'utf8').catch(() => ''));
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
  if (holder !== null && pidAlive(holder)) return { holder };
  await rm(file, { force: true });
  return (await create(file)) ? taken : { holder: await holderOf(file) };
}
