/** The small interface that local.ts and ssh.ts implement: start `bash -s` and hand back its streams. */
import type { Readable, Writable } from 'node:stream';
import type { NodeTarget } from './types.js';

/** One running `bash -s`. */
export interface Channel {
  stdin: Writable;
  stdout: Readable;
  stderr: Readable;
  /** Resolves once the process ended and its output streams are drained. */
  done: Promise<{ code: number | null; signal: string | null }>;
  /** Tear the channel down (local: kill the process group; ssh: close the channel). */
  kill(): void;
  /**
   * True once the process ended (its exit status or signal came) or its channel closed, also while its output is
   * still unread and `done` therefore still pending: a shell started ahead (runtime/node/warm.ts) that died is never
   * handed a script.
   */
  ended(): boolean;
  /** Set on a shell started ahead of its step (runtime/node/warm.ts), which may have died unseen before its script. */
  startedAhead?: boolean;
}

/** A live link to one node. */
export interface Transport {
  readonly target: NodeTarget;
  /** False once the link dropped or was closed; the pool then opens a new one. */
  readonly alive: boolean;
  /** Start `bash -s` (the exact remote command; never a login-shell command line built from inputs). */
  exec(): Promise<Channel>;
  /**
   * Why this link may not run a step for `target` as the files give it now (another host, user, port, key, or a host
   * key known_hosts no longer accepts), or null. A pool asks before every reuse: a link never outlives its files.
   */
  drift(target: NodeTarget): Promise<string | null>;
  close(): Promise<void>;
}
