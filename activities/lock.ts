/**
 * The node's deploy lock in the activities (runtime/steps/lock.ts, runtime/scripts/lock.sh): acquire and release as
 * steps of their own, and LockKeeper, which every node step of a locked deploy runs under: it confirms the lock is
 * still this deploy's before the step touches the node, renews it every lease/4 while the step runs (over the
 * node's pooled ssh connection), and aborts the step when the lock turns out lost.
 *
 * The deploy ID is the Temporal server's own workflowId/runId of the running activity, never a workflow input, so
 * no input can claim another deploy's lock. A resumed attempt (worker crash, another worker) has the same ID and
 * finds its own lock.
 */
import os from 'node:os';
import { Context } from '@temporalio/activity';
import { isPulseError, PulseError } from '../runtime/errors.js';
import type { NodeSession } from '../runtime/node/types.js';
import type { LockOwner } from '../runtime/steps/index.js';
import { LOCK_LEASE_S } from '../runtime/steps/index.js';
import type { LockResult } from '../runtime/model/index.js';
import type { LockInput, LockUse } from './contract.js';
import { authority } from './authority.js';
import type { ActivityDeps } from './deps.js';
import { nodeStep } from './heartbeat.js';
import { RawRecorder } from './raw.js';

/** When this process last confirmed a deploy's lock (monotonic ms), so back-to-back steps skip the extra round trip. */
const confirmed = new Map<string, { at: number; link: number | undefined }>();

/** The owner fields of the running activity's deploy. */
export function lockOwner(deps: ActivityDeps, action: 'up' | 'down'): LockOwner {
  const w = Context.current().info.workflowExecution;
  if (!w) throw new PulseError('internal', 'the node lock is taken by a deploy workflow only');
  return {
    deployId: `${w.workflowId}/${w.runId}`,
    host: deps.controllerHost ?? os.hostname(),
    action,
    leaseS: deps.lockLeaseS ?? LOCK_LEASE_S,
  };
}

/** A lost lock: lock.sh refused the renewal (another deploy holds it, or took and released it). */
export function isLockLost(err: unknown): boolean {
  return isPulseError(err) && err.kind === 'refused';
}

export class LockKeeper {
  private readonly leaseMs: number;

  constructor(
    private readonly deps: ActivityDeps,
    private readonly session: NodeSession,
    private readonly recipeDir: string,
    private readonly owner: LockOwner,
  ) {
    this.leaseMs = owner.leaseS * 1000;
  }

  /** Renew now; throws the refusal when the lock is no longer this deploy's. */
  async renew(signal?: AbortSignal): Promise<void> {
    const t = this.deps.clock.monotonic();
    // The link first: should it be replaced before the renewal runs, the next check sees another link and renews.
    const link = await this.session.link?.();
    await this.deps.steps.nodeLock(this.session, 'renew', this.recipeDir, this.owner, signal ? { signal } : {});
    confirmed.set(this.owner.deployId, { at: t, link });
  }

  /**
   * Before a step changes anything: the lock is still this deploy's. Skipped when this process renewed it less than
   * half a lease ago over the link the step will use: a lock renewed at node time T is live until T + lease, and only
   * a stale lock can change hands; but a link the files replaced (nodes.json or the ssh config now name another host)
   * reaches a node whose lock was never confirmed.
   */
  async check(signal?: AbortSignal): Promise<void> {
    const last = confirmed.get(this.owner.deployId);
    if (last !== undefined && this.deps.clock.monotonic() - last.at < this.leaseMs / 2 && last.link === (await this.session.link?.())) return;
    await this.renew(signal);
  }

  /** Runs `fn` under the lock: checked first, renewed every lease/4; a lost lock aborts `fn` and is thrown instead. */
  async around<T>(signal: AbortSignal, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
    await this.check(signal);
    const ac = new AbortController();
    const onAbort = (): void => ac.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    let lost: unknown = null;
    let busy = false;
    const timer = setInterval(() => {
      if (busy) return;
      busy = true;
      this.renew(ac.signal)
        .catch((e: unknown) => {
          // A dropped link is not a lost lock: the next renewal (or the next step's check) tries again.
          if (isLockLost(e) && !lost) {
            lost = e;
            ac.abort(e);
          }
        })
        .finally(() => (busy = false));
    }, Math.max(250, this.leaseMs / 4));
    try {
      const r = await fn(ac.signal);
      if (lost) throw lost;
      return r;
    } catch (e) {
      throw lost ?? e;
    } finally {
      clearInterval(timer);
      signal.removeEventListener('abort', onAbort);
    }
  }
}

/** Forget a deploy's confirmation (after release), so nothing skips a check on a lock this process let go. */
export function forgetLock(deployId: string): void {
  confirmed.delete(deployId);
}

/** The keeper of a step's lock, or undefined for a deploy that holds none (started before the lock existed). */
export function keeperFor(deps: ActivityDeps, session: NodeSession, recipeDir: string, lock: LockUse | undefined): LockKeeper | undefined {
  return lock?.nodeLock ? new LockKeeper(deps, session, recipeDir, lockOwner(deps, 'up')) : undefined;
}

export function lockActivities(deps: ActivityDeps) {
  const every = deps.heartbeatEveryMs ?? 5000;
  const own = authority(deps.files);
  const once = async (input: LockInput, op: 'acquire' | 'release'): Promise<LockResult> => {
    // The worker is the authority: node, target and recipe dir are the worker's own for the names in the input.
    // (A lock changes nothing the protected-node rule guards, so it needs no --yes; the steps it guards do.)
    const mine = own.stop({ node: input.node, target: input.target, recipe: input.recipe, confirmed: true });
    const owner = lockOwner(deps, input.action === 'down' ? 'down' : 'up');
    const rec = new RawRecorder(deps.nodes.session(mine.target));
    const lock = await nodeStep(every, (o) => deps.steps.nodeLock(rec.session, op, mine.recipe.dir, owner, o));
    if (op === 'acquire') confirmed.set(owner.deployId, { at: deps.clock.monotonic(), link: await rec.session.link?.() });
    else forgetLock(owner.deployId);
    deps.logger.info(`lock ${op} on ${mine.node}`, { deployId: owner.deployId, state: lock?.state ?? null });
    // Into history only what the lock step's note shows (runtime/steps/catalog.ts lockNote): the holder is this deploy.
    if (lock?.cleared) deps.logger.warn(`lock on ${mine.node}: ${lock.cleared}`, { deployId: owner.deployId });
    const cleared = lock?.cleared ? { cleared: lock.cleared } : {};
    return rec.attach({ lock: lock ? { state: lock.state, since: lock.since, leaseUntil: lock.leaseUntil, ...cleared } : null }, input.raw !== false);
  };
  return {
    /** Before anything else on the node: take its lock; refused (the holder named) while another deploy's is live. */
    async acquireNodeLock(input: LockInput): Promise<LockResult> {
      return once(input, 'acquire');
    },
    /** At the end of a deploy: let the lock go if this deploy still holds it (a no-op otherwise). */
    async releaseNodeLock(input: LockInput): Promise<LockResult> {
      return once(input, 'release');
    },
  };
}
