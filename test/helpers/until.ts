/** Waiting in tests: one poll that throws when its limit passes, and one that hands back its last sample. */

export interface UntilOptions {
  /** Time between two looks (default 100 ms). */
  everyMs?: number;
  /** A line when the awaited thing can no longer come (its process exited): thrown at once. */
  died?: () => string | null;
  /** Appended to the timeout error (a process's output, say). */
  detail?: () => string;
}

/** Polls `ok` until it holds; throws, naming `what`, once `timeoutMs` passes or `died` says it never will. */
export async function until(what: string, ok: () => boolean | Promise<boolean>, timeoutMs: number, opts: UntilOptions = {}): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const dead = opts.died?.();
    if (dead) throw new Error(dead);
    if (await ok()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${opts.detail ? `:\n${opts.detail()}` : ''}`);
    await new Promise((r) => setTimeout(r, opts.everyMs ?? 100));
  }
}

/** Polls a probe until `done` says so or the attempts run out, and returns its last answer (the test asserts on it). */
export async function pollUntil<T>(probe: () => Promise<T>, done: (t: T) => boolean, attempts = 100, waitMs = 100): Promise<T> {
  let last = await probe();
  for (let i = 0; i < attempts && !done(last); i++) {
    await new Promise((r) => setTimeout(r, waitMs));
    last = await probe();
  }
  return last;
}
