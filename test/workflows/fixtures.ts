/** Hand-made plans and a scripted fake of every activity, for the workflow tier (time-skipping server). */
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { PulseActivities, StateInput, StartInput, UpStepPlan } from '../../activities/contract.js';
import type { DownPlan, PreflightReport, UpPlan } from '../../runtime/model/index.js';
import { isInputRef } from '../../activities/authority.js';
import { workerInputReader as readInput } from '../../activities/workflow-input.js';

/** The plan a fake step names: an UpInputRef's is the workflow input, read as the worker reads it (activities/workflow-input.ts). */
export async function planOf(p: UpStepPlan): Promise<UpPlan> {
  return isInputRef(p) ? ((await readInput()) as UpPlan) : (p as UpPlan);
}

export function upPlan(over: Partial<UpPlan> = {}): UpPlan {
  const recipe = { name: 'qwen38-flash', dir: '/srv/qwen38', start: 'start.sh', stop: 'stop.sh', container: 'vllm_qwen38' };
  return {
    action: 'up', version: 1, node: 'spark2', target: { name: 'spark2', host: 'ssh', ssh: 'spark2' }, profile: 'best',
    protected: false, confirmed: false, experimental: false, recipe,
    env: {
      text: '# pulse-profile: best\nMAX_NUM_SEQS="4"\n',
      identity: { sha256: 'a'.repeat(64), profile: 'best', overlay: 'none' },
      path: '/srv/qwen38/.env',
      values: { MAX_NUM_SEQS: '4' },
    },
    stamp: '20260923T101500Z', renderedAt: '2026-09-23T10:15:00Z', mkdirs: ['/srv/triton-cache'], mounts: [], replacements: [],
    overlay: null, proofs: [], clientNotes: ['use cache_salt'],
    expect: { servedModelName: 'qwen38', maxModelLen: 524288, port: 8000, bind: '127.0.0.1' },
    memory: { gateGiB: 100, timeoutS: 600 }, readiness: { timeoutS: 2100 }, restart: false,
    fleet: [{ node: 'spark2', gatewayUrl: 'http://127.0.0.1:8000', reachable: false }],
    rollbackHint: 'pulse model up datagen --node spark2',
    ...over,
  };
}

export function downPlan(over: Partial<DownPlan> = {}): DownPlan {
  const p = upPlan();
  return { action: 'down', version: 1, node: p.node, target: p.target, protected: false, confirmed: false, recipe: p.recipe, stamp: p.stamp, fleet: p.fleet, ...over };
}

export function preflight(over: Partial<PreflightReport> = {}): PreflightReport {
  return {
    ok: true, checks: [{ name: 'recipe', ok: true, detail: 'ok' }], diff: { added: [], removed: [], changed: [] },
    currentIdentity: { sha256: 'b'.repeat(64), profile: 'datagen', overlay: 'none' }, currentBodyMatches: true, envCtime: 1,
    container: { name: 'vllm_qwen38', running: true, status: 'running', image: 'img', startedAt: null },
    mountCtimes: [], openConnections: 0, otherVllmContainers: [], sameIdentityRunning: false, restartReason: null,
    ...over,
  };
}

export type ActName = keyof PulseActivities;

export interface FakeRun {
  acts: PulseActivities;
  /** Activity names in call order (publishState as publishState:<state>). */
  calls: string[];
  states: StateInput[];
  starts: StartInput[];
}

/** Waits for the workflow's cancellation (heartbeating so the cancel request reaches the activity). */
export async function hangUntilCancelled(): Promise<never> {
  const ctx = Context.current();
  const t = setInterval(() => ctx.heartbeat(), 50);
  try {
    return await ctx.cancelled;
  } finally {
    clearInterval(t);
  }
}

export function nonRetryable(type: string, message: string): ApplicationFailure {
  return ApplicationFailure.create({ type, message, nonRetryable: true });
}

/** Fake activities that succeed, unless `over` replaces one (throw, hang, other answer). */
export function fakeActivities(over: Partial<Record<ActName, (...args: never[]) => Promise<unknown>>> = {}, pre = preflight()): FakeRun {
  const run: FakeRun = { acts: {} as PulseActivities, calls: [], states: [], starts: [] };
  const base: PulseActivities = {
    checkPlan: async (plan) => ({ node: plan.node, nodesFile: '(fake)' }),
    planRollback: async () => {
      throw new Error('no rollback in this fake');
    },
    watchdogProbe: async () => {
      throw new Error('no watchdog in this fake');
    },
    watchdogRecord: async () => {
      throw new Error('no watchdog in this fake');
    },
    acquireNodeLock: async () => ({ lock: null }),
    releaseNodeLock: async () => ({ lock: null }),
    runPreflight: async () => pre,
    makeDirs: async () => ({}),
    drainServer: async () => ({ source: 'metrics' as const, budgetS: 300, waitedS: 0, idle: true, atStart: 0, drained: 0, cut: 0, running: 0, waiting: 0, connections: null, shutdownTimeoutS: null, detail: 'GET /metrics: 0 running, 0 waiting' }),
    stopServer: async () => ({ wasRunning: true, containerGone: true }),
    waitForMemory: async () => ({ memAvailableGiB: 110, gateGiB: 100, watermarkScaleFactor: 10 }),
    writeEnv: async () => ({ written: true, backupPath: '/srv/qwen38/.env.pulse-bak-20260923T101500Z', carriedSecretLines: 1 }),
    startServer: async () => ({ started: true, logPath: '/srv/qwen38/logs/pulse-up-20260923T101500Z.log' }),
    pollReadiness: async () => ({ ready: true, httpStatus: 200, detail: 'ok' }),
    verifyServer: async () => ({ ok: true, servedModelName: 'qwen38', maxModelLen: 524288, kvCacheLine: 'GPU KV cache size: 1 tokens', proofs: [], problems: [], warnings: [] }),
    publishState: async () => ({ warnings: [], changed: true }),
    markFailed: async () => ({ warnings: [], changed: true }),
    readFailedStart: async (input: { logPath: string | null }) => ({ logPath: input.logPath, source: 'container' as const, name: 'vllm-qwen38', lines: ['RuntimeError: Engine core initialization failed'], known: null, problem: null }),
  };
  for (const name of Object.keys(base) as ActName[]) {
    const impl = (over[name] ?? base[name]) as (...a: unknown[]) => Promise<unknown>;
    (run.acts as unknown as Record<string, unknown>)[name] = async (...args: unknown[]) => {
      const input = args[0] as StateInput & StartInput;
      if (name === 'publishState' || name === 'markFailed') run.states.push(input);
      if (name === 'startServer') run.starts.push(input);
      run.calls.push(name === 'publishState' ? `publishState:${input.state}` : name);
      return impl(...args);
    };
  }
  return run;
}
