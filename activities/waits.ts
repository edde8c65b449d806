/**
 * The two wait activities (memory gate, readiness): one long heartbeating poll each, see wait-loop.ts for why. Each
 * probe records its own raw lines, so the result carries the last probe's records only (a wait can probe for
 * half an hour: all of them would be noise, and too much for history).
 */
import { Context } from '@temporalio/activity';
import type { MemorySample, ReadinessProbe, ReadinessSeen } from '../runtime/model/index.js';
import { authority } from './authority.js';
import { workerInputReader } from './workflow-input.js';
import type { LockUse, ReadinessHint, UpStepPlan } from './contract.js';
import type { ActivityDeps } from './deps.js';
import { keeperFor } from './lock.js';
import { RawRecorder } from './raw.js';
import { LogWatch } from './log-watch.js';
import { pollUntil, QUICK_PROBES } from './wait-loop.js';
import { estimateOf } from '../runtime/vllm/readiness-eta.js';

/** A readiness memo from a checkpoint (untrusted JSON from the heartbeat), or null. */
function seenOf(memo: unknown): ReadinessSeen | null {
  const m = memo as Partial<ReadinessSeen> | null | undefined;
  return m && typeof m.containerId === 'string' && typeof m.restartCount === 'number' ? { containerId: m.containerId, restartCount: m.restartCount } : null;
}

export function waitActivities(deps: ActivityDeps) {
  const interval = deps.pollIntervalMs ?? 1000;
  // Readiness follows the server's log and probes at once on its startup line: the periodic probe is the fallback.
  const fallback = deps.readinessProbeMs ?? 3 * interval;
  const { steps } = deps;
  const own = authority(deps.files, deps.workflowInput ?? workerInputReader); // the worker's own plan for the names in the input
  const log = (what: string, node: string): void => {
    const { attempt, workflowExecution } = Context.current().info;
    deps.logger.info(`${what} on ${node}`, { attempt, workflowId: workflowExecution?.workflowId });
  };

  return {
    /** Step 4: sample MemAvailable (every 200 ms for the first second after the stop, then every second) until the gate, up to plan.memory.timeoutS (resumes after a crash). */
    async waitForMemory(input: UpStepPlan, lock?: LockUse): Promise<MemorySample> {
      const plan = await own.upOf(input);
      log('memory wait', plan.node);
      const session = deps.nodes.session(plan.target);
      const keeper = keeperFor(deps, session, plan.recipe.dir, lock);
      return pollUntil({
        ...(keeper ? { guard: (signal: AbortSignal) => keeper.check(signal) } : {}),
        ...(deps.stopping ? { handBack: deps.stopping } : {}),
        step: 'memory',
        timeoutS: plan.memory.timeoutS,
        intervalMs: interval,
        quickStart: QUICK_PROBES,
        monotonic: () => deps.clock.monotonic(),
        ...(deps.sleep ? { sleep: deps.sleep } : {}),
        probe: async (o) => {
          const rec = new RawRecorder(session);
          const m = await steps.sampleMemory(rec.session, plan.memory.gateGiB, o);
          const ok = m.memAvailableGiB >= m.gateGiB;
          return { done: ok, answer: `MemAvailable ${m.memAvailableGiB} GiB ${ok ? '>=' : '<'} ${m.gateGiB} GiB`, value: rec.attach(m, lock?.raw !== false) };
        },
      });
    },
    /**
     * Step 7: probe /v1/models until 200, up to plan.readiness.timeoutS (resumes after a crash): at once when the
     * followed log says the server started (or the container ended), else every `fallback` ms.
     */
    async pollReadiness(input: UpStepPlan, lock?: LockUse, hint?: ReadinessHint): Promise<ReadinessProbe> {
      const plan = await own.upOf(input);
      log('readiness wait', plan.node);
      const session = deps.nodes.session(plan.target);
      const keeper = keeperFor(deps, session, plan.recipe.dir, lock);
      const monotonic = (): number => deps.clock.monotonic();
      const follow = (onLine: (line: string) => void, signal: AbortSignal): Promise<boolean> => steps.followServerLog(session, plan, onLine, { signal });
      const watch = new LogWatch(follow, fallback, monotonic, Context.current().cancellationSignal);
      return pollUntil({
        ...(keeper ? { guard: (signal: AbortSignal) => keeper.check(signal) } : {}),
        ...(deps.stopping ? { handBack: deps.stopping } : {}),
        step: 'readiness',
        ...estimateOf(hint),
        timeoutS: plan.readiness.timeoutS,
        intervalMs: fallback,
        watch,
        monotonic: () => deps.clock.monotonic(),
        ...(deps.sleep ? { sleep: deps.sleep } : {}),
        // The first container a probe saw is the memo: a later probe fails fast when it was replaced or restarted.
        probe: async (o, memo) => {
          const rec = new RawRecorder(session);
          const seen = seenOf(memo);
          const p = await steps.probeReadiness(rec.session, plan, o, seen, watch.live);
          const answer = p.httpStatus === null ? p.detail : `HTTP ${p.httpStatus}: ${p.detail}`;
          const server = p.phase !== undefined || p.lastLine !== undefined ? { phase: p.phase ?? null, lastLine: p.lastLine ?? null } : {};
          return { done: p.ready, answer, value: rec.attach(p, lock?.raw !== false), ...(!seen && p.container ? { memo: p.container } : {}), ...server };
        },
      });
    },
  };
}
