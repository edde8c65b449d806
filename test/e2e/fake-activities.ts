/**
 * Scripted stand-ins for the activities, for the CLI-client tests: the real workflows run on a real dev server,
 * and these answer each step per node as the test says (a readiness that waits for a gate, never comes, ...).
 * The node tier and the simulator tests cover the real activities; here the subject is the client.
 */
import { ApplicationFailure, Context, sleep } from '@temporalio/activity';
import type { PulseActivities, SparseStateInput, StateInput, UpStepPlan } from '../../activities/contract.js';
import type { PreflightReport, UpPlan, WaitProgress } from '../../runtime/model/index.js';
import { isInputRef } from '../../activities/authority.js';
import { workerInputReader as readInput } from '../../activities/workflow-input.js';

export interface NodeScript {
  /** The identity runs already: up does steps 1, 7, 8, 9 only. */
  sameIdentity: boolean;
  /** Profile in the node's current .env (rollback command). */
  currentProfile: string | null;
  /** 'gate': wait until `release()`; 'never': time out after a few probes; 'ready': at once. */
  readiness: 'ready' | 'gate' | 'never';
  /** The first readiness attempt fails like a dropped ssh link (retried by Temporal). */
  dropFirst?: boolean;
}

export interface Recorded {
  published: (StateInput | SparseStateInput)[];
  failed: (StateInput | SparseStateInput)[];
  starts: number;
}

const scripts = new Map<string, NodeScript>();
const released = new Set<string>();
export const recorded = new Map<string, Recorded>();

/** Sets what a node does in the next deploys. */
export function script(node: string, s: Partial<NodeScript>): void {
  scripts.set(node, { sameIdentity: false, currentProfile: null, readiness: 'ready', ...s });
  released.delete(node);
}

/** Lets a gated readiness on the node answer 200. */
export function release(node: string): void {
  released.add(node);
}

function rec(node: string): Recorded {
  let r = recorded.get(node);
  if (!r) recorded.set(node, (r = { published: [], failed: [], starts: 0 }));
  return r;
}

/**
 * The plan a step names: since HISTORY_PATCH an UpInputRef, whose plan the fake reads from the workflow input as the
 * worker does (activities/workflow-input.ts); the check returns no planDigest, so an older path hands the whole plan.
 */
const whole = async (p: UpStepPlan): Promise<UpPlan> => (isInputRef(p) ? ((await readInput()) as UpPlan) : (p as UpPlan));

const of = (node: string): NodeScript => scripts.get(node) ?? { sameIdentity: false, currentProfile: null, readiness: 'ready' };

function preflight(plan: UpPlan): PreflightReport {
  const s = of(plan.node);
  return {
    ok: true, checks: [{ name: 'recipe', ok: true, detail: 'ok' }], diff: { added: [], removed: [], changed: [] },
    currentIdentity: s.currentProfile ? { sha256: 'x', profile: s.currentProfile, overlay: 'none' } : null,
    currentBodyMatches: true, envCtime: 1, container: null, mountCtimes: [], openConnections: 0, otherVllmContainers: [],
    sameIdentityRunning: s.sameIdentity, restartReason: null,
  };
}

async function readiness(input: UpStepPlan) {
  const plan = await whole(input);
  const s = of(plan.node);
  const ctx = Context.current();
  if (s.dropFirst && ctx.info.attempt === 1) {
    throw ApplicationFailure.create({ type: 'Unreachable', message: 'ssh link to the node dropped' });
  }
  const started = Date.now();
  for (let attempt = 1; ; attempt++) {
    const elapsedS = (Date.now() - started) / 1000;
    const p: WaitProgress = { step: 'readiness', attempt, lastAnswer: 'HTTP 503', elapsedS, timeoutS: plan.readiness.timeoutS };
    ctx.heartbeat(p);
    if (s.readiness === 'ready' || released.has(plan.node)) return { ready: true, httpStatus: 200, detail: 'HTTP 200' };
    if (s.readiness === 'never' && attempt >= 3) {
      throw ApplicationFailure.create({ type: 'Timeout', message: `/v1/models not ready after ${plan.readiness.timeoutS} s`, nonRetryable: true });
    }
    await sleep(200); // throws CancelledFailure when the deploy is cancelled (heartbeats deliver it)
  }
}

/** The activity implementations, as createPulseWorker would register them. */
export const fakeActivities: PulseActivities = {
  async checkPlan(plan) {
    return { node: plan.node, nodesFile: '(fake)' };
  },
  async planRollback() {
    throw new Error('no rollback in this fake');
  },
  async watchdogProbe() {
    throw new Error('no watchdog in this fake');
  },
  async watchdogRecord() {
    throw new Error('no watchdog in this fake');
  },
  async acquireNodeLock() {
    return { lock: null };
  },
  async releaseNodeLock() {
    return { lock: null };
  },
  async runPreflight(plan) {
    return preflight(await whole(plan));
  },
  async makeDirs() {
    return {};
  },
  async drainServer() {
    return ({ source: 'metrics' as const, budgetS: 300, waitedS: 0, idle: true, atStart: 0, drained: 0, cut: 0, running: 0, waiting: 0, connections: null, shutdownTimeoutS: null, detail: 'GET /metrics: 0 running, 0 waiting' });
  },
  async stopServer() {
    return { wasRunning: true, containerGone: true };
  },
  async waitForMemory(plan) {
    return { memAvailableGiB: 110, gateGiB: (await whole(plan)).memory.gateGiB, watermarkScaleFactor: 10 };
  },
  async writeEnv(input) {
    const plan = await whole(input);
    return { written: true, backupPath: `/recipes/${plan.node}/.env.pulse-bak-${plan.stamp}`, carriedSecretLines: 0 };
  },
  async startServer(input) {
    const plan = await whole(input.plan);
    rec(plan.node).starts += 1;
    return { started: true, logPath: `/recipes/${plan.node}/logs/pulse-up-${plan.stamp}.log` };
  },
  pollReadiness: readiness,
  async verifyServer(input) {
    const plan = await whole(input.plan);
    return {
      ok: true, servedModelName: plan.expect.servedModelName, maxModelLen: plan.expect.maxModelLen,
      kvCacheLine: 'GPU KV cache size: 1000 tokens', proofs: plan.proofs.map((text, i) => ({ text, found: i > 0 })), problems: [],
      warnings: plan.proofs.slice(0, 1).map((text) => `pulse-proof not found in the container log: ${text}`),
    };
  },
  async publishState(input) {
    rec(input.node).published.push(input);
    return { warnings: [], changed: true };
  },
  async markFailed(input) {
    rec(input.node).failed.push(input);
    return { warnings: [], changed: true };
  },
  async readFailedStart(input) {
    return { logPath: input.logPath, source: null, name: null, lines: [], known: null, problem: 'no node in this fake' };
  },
};
