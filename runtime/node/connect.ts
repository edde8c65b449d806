/**
 * Opening sessions to nodes. `openSession` gives one session; `NodePool` keeps ONE connection per node for all
 * steps of a deploy, opens a new one after a dropped link, counts the connections it opened, and closes idle ones.
 */
import { PulseError } from '../errors.js';
import { LocalTransport } from './local.js';
import { TransportSession } from './session.js';
import type { Transport } from './transport.js';
import { WarmTransport } from './warm.js';
import type { NodeSession, NodeTarget, RunOptions, RemoteResult, StepName } from './types.js';

/** Open the transport of a target (ssh2 is loaded only when an ssh node is used). */
export async function openTransport(target: NodeTarget): Promise<Transport> {
  if (target.host === 'local') return new LocalTransport(target);
  if (target.host !== 'ssh' || !target.ssh) {
    throw new PulseError('config', `${target.name}: host must be local, or ssh with an ssh target`);
  }
  const { openSshTransport } = await import('./ssh.js');
  return openSshTransport(target);
}

/** Open a session to one node (local: child `bash -s`; ssh: one verified ssh2 connection). */
export async function openSession(target: NodeTarget): Promise<NodeSession> {
  return new TransportSession(await openTransport(target));
}

/** Options of a NodePool. */
export interface PoolOptions {
  /** Close a connection unused for this long (ms). Default 5 minutes. */
  idleMs?: number;
  /** Replace how a transport is opened (tests). */
  open?: (target: NodeTarget) => Promise<Transport>;
  /**
   * Keep one `bash -s` started ahead on each ssh link (runtime/node/warm.ts): the worker's pool, whose deploys run
   * step after step on a node. Off for the CLI's few scripts per command.
   */
  warm?: boolean;
}

interface Entry {
  session: TransportSession | null;
  /** The link being opened: every acquire meanwhile joins it (and its failure), as one connect for all of them. */
  opening: Promise<TransportSession> | null;
  /** Acquires of this node are judged one after another: a link is judged, and replaced, once per turn. */
  turn: Promise<unknown>;
  idle: NodeJS.Timeout | null;
  busy: number;
}

/**
 * One connection per node, shared by all steps; reconnects after a drop. Before each step the link is judged again
 * by the files that chose it (nodes.json's target, `ssh -G`, the identity files, known_hosts: Transport.drift): a
 * link the files no longer choose is retired and a new one opened, so no step ever runs on a host, user, key or
 * host key the files have since taken back. A retired link closes once the steps still running on it end.
 */
export class NodePool {
  private readonly entries = new Map<string, Entry>();
  /** Steps running on each session, so a retired link closes after its last one. */
  private readonly running = new Map<TransportSession, number>();
  private readonly retired = new Set<TransportSession>();
  /** A number per link this pool opened (NodeSession.link). */
  private readonly linkIds = new WeakMap<TransportSession, number>();
  private opened = 0;
  private readonly idleMs: number;
  private readonly opener: (target: NodeTarget) => Promise<Transport>;
  private readonly warm: boolean;

  constructor(opts: PoolOptions = {}) {
    this.idleMs = opts.idleMs ?? 300_000;
    this.opener = opts.open ?? openTransport;
    this.warm = opts.warm ?? false;
  }

  /** How many connections this pool has opened in total (benchmarks assert one per node). */
  get connectionsOpened(): number {
    return this.opened;
  }

  /** How many pooled connections are open now (idle ones close after idleMs). */
  get liveConnections(): number {
    return [...this.entries.values()].filter((e) => e.session?.alive).length;
  }

  /**
   * A session for the target that borrows the pooled connection on every run. `link()` judges the link now and
   * keeps it for this session's next run, so a lock check and the step after it use the link that was judged, once.
   */
  session(target: NodeTarget): NodeSession {
    let judged: TransportSession | null = null;
    return {
      target,
      run: (step: StepName, opts?: RunOptions) => {
        const s = judged;
        judged = null;
        return this.run(target, step, opts, s);
      },
      link: async () => {
        judged = await this.acquire(target);
        return this.linkIds.get(judged) ?? 0;
      },
      close: async () => undefined, // the pool owns the connection
    };
  }

  /**
   * The live pooled session of a node as the files give it now: the pooled one when it is alive and its files still
   * choose it, else a new one (after a drop, or in place of one the files no longer choose). The turn covers the
   * judging only: steps that come while a link opens wait for that one connect, not for one each.
   */
  acquire(target: NodeTarget): Promise<TransportSession> {
    const e = this.entry(target.name);
    const judged = e.turn.then(() => this.judge(e, target));
    e.turn = judged.catch(() => undefined);
    return judged.then((j) => j.session);
  }

  /** The session to use, wrapped so that the turn does not wait for a connect in progress. */
  private async judge(e: Entry, target: NodeTarget): Promise<{ session: Promise<TransportSession> }> {
    if (e.opening) return { session: e.opening };
    const had = e.session;
    if (had?.alive && (await had.drift(target)) === null) return { session: Promise.resolve(had) };
    e.session = null;
    if (had) this.retire(had);
    const opening = this.opener(target).then((t) => {
      this.opened += 1;
      const session = new TransportSession(this.warm && target.host === 'ssh' ? new WarmTransport(t) : t);
      this.linkIds.set(session, this.opened);
      return (e.session = session);
    });
    e.opening = opening;
    void opening.then(() => (e.opening = null), () => (e.opening = null));
    return { session: opening };
  }

  /** Close a session that no longer serves its node, now or once the steps running on it end. */
  private retire(s: TransportSession): void {
    if ((this.running.get(s) ?? 0) > 0) this.retired.add(s);
    else void s.close().catch(() => undefined);
  }

  /** Run one step on the pooled connection; the idle timer stops while a step runs. */
  async run(target: NodeTarget, step: StepName, opts?: RunOptions, judged: TransportSession | null = null): Promise<RemoteResult> {
    const e = this.entry(target.name);
    if (e.idle) clearTimeout(e.idle);
    e.busy += 1;
    try {
      // A link judged a moment ago for this run (NodeSession.link) serves it while it is still the node's link.
      const s = judged && judged === e.session && judged.alive ? judged : await this.acquire(target);
      this.running.set(s, (this.running.get(s) ?? 0) + 1);
      try {
        return await s.run(step, opts);
      } finally {
        const left = (this.running.get(s) ?? 1) - 1;
        if (left > 0) this.running.set(s, left);
        else {
          this.running.delete(s);
          if (this.retired.delete(s)) void s.close().catch(() => undefined);
        }
      }
    } finally {
      e.busy -= 1;
      if (e.busy === 0) this.armIdle(target.name, e);
    }
  }

  /** Close every connection. */
  async closeAll(): Promise<void> {
    const all = [...this.entries.values()];
    const retired = [...this.retired];
    this.entries.clear();
    this.retired.clear();
    await Promise.all([
      ...all.map(async (e) => {
        if (e.idle) clearTimeout(e.idle);
        await e.session?.close().catch(() => undefined);
      }),
      ...retired.map((s) => s.close().catch(() => undefined)),
    ]);
  }

  private entry(name: string): Entry {
    let e = this.entries.get(name);
    if (!e) this.entries.set(name, (e = { session: null, opening: null, turn: Promise.resolve(), idle: null, busy: 0 }));
    return e;
  }

  private armIdle(name: string, e: Entry): void {
    e.idle = setTimeout(() => {
      if (e.busy > 0) return;
      const s = e.session;
      e.session = null;
      this.entries.delete(name);
      void s?.close().catch(() => undefined);
    }, this.idleMs);
    e.idle.unref();
  }
}
