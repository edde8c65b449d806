/**
 * The drain step (issue 29): before a stop of a serving server, wait until vLLM has nothing in flight (its /metrics
 * gauges num_requests_running and num_requests_waiting both 0), or until the drain budget runs out; then the stop
 * goes on either way, and the result says how many requests it cuts. One long heartbeating poll (wait-loop.ts): a
 * worker crash resumes it from its checkpoint (the time waited, the count at its start), a cancel ends it at once.
 * Read-only on the node: nothing is stopped yet, so a failure or a cancel here needs no compensation.
 */
import { Context } from '@temporalio/activity';
import type { DrainResult, DrainSample } from '../runtime/model/index.js';
import { drainWords, inFlight, type DrainTarget } from '../runtime/steps/index.js';
import { authority } from './authority.js';
import { workerInputReader } from './workflow-input.js';
import type { DrainInput, LockUse } from './contract.js';
import type { ActivityDeps } from './deps.js';
import { keeperFor } from './lock.js';
import { RawRecorder } from './raw.js';
import { pollUntil, type WaitCheckpoint } from './wait-loop.js';

/** What the drain keeps across its probes and attempts (in the heartbeat: counts only, no secret). */
interface DrainMemo {
  atStart: number;
  last: DrainSample;
}

function memoOf(v: unknown): DrainMemo | null {
  const m = v as Partial<DrainMemo> | null | undefined;
  return m && typeof m.atStart === 'number' && typeof m.last === 'object' && m.last !== null ? (m as DrainMemo) : null;
}

/** The result from the last sample: `cut` is what is still in flight when the drain ends (0 when it reached idle). */
export function drainResult(budgetS: number, waitedS: number, atStart: number, last: DrainSample | null, idle: boolean): DrainResult {
  const left = last ? inFlight(last) : 0;
  const cut = idle ? 0 : left;
  return {
    source: last?.source ?? 'connections',
    budgetS,
    waitedS,
    idle,
    atStart,
    drained: idle ? atStart : Math.max(0, atStart - cut),
    cut,
    running: last?.running ?? null,
    waiting: last?.waiting ?? null,
    connections: last?.connections ?? null,
    shutdownTimeoutS: last?.shutdownTimeoutS ?? null,
    detail: last ? last.detail : 'no sample answered',
  };
}

export function drainActivities(deps: ActivityDeps) {
  const interval = deps.pollIntervalMs ?? 1000;
  const own = authority(deps.files, deps.workflowInput ?? workerInputReader);
  return {
    /** Before a stop: wait until the server has nothing in flight, up to the drain budget (resumes after a crash). */
    async drainServer(input: DrainInput, lock?: LockUse): Promise<DrainResult> {
      const d = own.drain(input);
      const { attempt, workflowExecution } = Context.current().info;
      deps.logger.info(`drain on ${d.node}`, { attempt, workflowId: workflowExecution?.workflowId, budgetS: d.budgetS });
      if (d.budgetS === 0) return { ...drainResult(0, 0, 0, null, false), skipped: true, detail: 'drain budget 0: no drain' };
      const session = deps.nodes.session(d.target);
      const keeper = keeperFor(deps, session, d.recipe.dir, lock);
      const target: DrainTarget = { recipe: d.recipe, port: d.port, bind: d.bind, http: d.http };
      const raw = lock?.raw !== false;
      const settle = (v: DrainResult | undefined, cp: WaitCheckpoint, expired: boolean): DrainResult => {
        const m = memoOf(cp.memo);
        const r = drainResult(d.budgetS, Math.round(cp.elapsedMs / 1000), m?.atStart ?? 0, m?.last ?? null, !expired);
        return { ...r, ...(v?.raw ? { raw: v.raw } : {}) };
      };
      return pollUntil<DrainResult>({
        ...(keeper ? { guard: (signal: AbortSignal) => keeper.check(signal) } : {}),
        ...(deps.stopping ? { handBack: deps.stopping } : {}),
        step: 'drain',
        timeoutS: d.budgetS,
        intervalMs: interval,
        monotonic: () => deps.clock.monotonic(),
        ...(deps.sleep ? { sleep: deps.sleep } : {}),
        settle,
        probe: async (o, memo) => {
          const rec = new RawRecorder(session);
          const s = await deps.steps.sampleDrain(rec.session, target, o);
          const n = inFlight(s);
          const next: DrainMemo = { atStart: memoOf(memo)?.atStart ?? n, last: s };
          const value = rec.attach(drainResult(d.budgetS, 0, next.atStart, s, n === 0), raw);
          return { done: n === 0, answer: drainWords(s), value, memo: next, drain: { source: s.source, running: s.running, waiting: s.waiting, connections: s.connections } };
        },
      });
    },
  };
}
