/**
 * Which pollers the Temporal server lists are alive, and of which build. The server keeps a dead poller listed for
 * minutes, so a worker on this host (SDK identity `<pid>@<host>`) is judged by its pid, others by their last poll.
 * Shared by the CLI's worker presence and by a starting worker deciding whether the current build still runs.
 */
import os from 'node:os';
import { pidAlive } from './pid.js';

/** The fields of a Temporal PollerInfo read here. */
export interface PollerLike {
  identity?: string | null;
  lastAccessTime?: { seconds?: number | { toNumber(): number } | null } | null;
  /** Set for versioned workers (worker/versioning.ts): the build they poll as. */
  deploymentOptions?: { buildId?: string | null } | null;
}

const REMOTE_POLLER_FRESH_S = 90; // a live worker re-polls within the server's ~70 s long-poll timeout

/** Whether a poller the server remembers is still alive. */
export function pollerAlive(p: PollerLike, nowMs = Date.now(), host = os.hostname()): boolean {
  const m = /^(\d+)@(.+)$/.exec(p.identity ?? '');
  if (m && m[2] === host) return pidAlive(Number(m[1]));
  const s = p.lastAccessTime?.seconds;
  const sec = s && typeof s === 'object' ? s.toNumber() : Number(s ?? 0);
  return nowMs / 1000 - sec < REMOTE_POLLER_FRESH_S;
}

/** Whether a live poller of this build is among `pollers`. */
export function buildPolls(pollers: readonly PollerLike[], buildId: string): boolean {
  return pollers.some((p) => p.deploymentOptions?.buildId === buildId && pollerAlive(p));
}
