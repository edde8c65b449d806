/** The activities that run one node script each: thin, typed input → runtime step (with heartbeats) → result. */
import { Context } from '@temporalio/activity';
import type { NodeSession } from '../runtime/node/types.js';
import type { StepOptions } from '../runtime/steps/index.js';
import type {
  DownPlan, FailedStart, MkdirResult, PlanRecipe, NodeTarget, PreflightReport, PreflightSummary, StartResult, StepRaw, StopResult, UpCheckInput, UpInputRef, UpPlan, UpStart, VerifyResult, WriteEnvResult,
} from '../runtime/model/index.js';
import { planDigest, refusePlan } from '../runtime/plan/plan-check.js';
import type { LockUse, PlanCheck, StartInput, StopInput, UpStepPlan, VerifyInput } from './contract.js';
import { nodeOf } from '../runtime/config/nodes.js';
import { readLogTail } from '../runtime/status/log-tail.js';
import { authority, isInputRef } from './authority.js';
import { workerInputReader } from './workflow-input.js';
import type { ActivityDeps } from './deps.js';
import { classified } from './errors.js';
import { nodeStep } from './heartbeat.js';
import { keeperFor } from './lock.js';
import { RawRecorder } from './raw.js';

/** How long each read of the failed start may take (the auto-rollback waits for it). */
const FAILED_START_READ_MS = 20_000;

export function nodeStepActivities(deps: ActivityDeps) {
  const every = deps.heartbeatEveryMs ?? 5000;
  const { steps } = deps;
  // Every input below is only a name: each activity runs the worker's own plan for it (activities/authority.ts).
  const own = authority(deps.files, deps.workflowInput ?? workerInputReader);
  const log = (what: string, node: string): void => {
    const { attempt, workflowExecution } = Context.current().info;
    deps.logger.info(`${what} on ${node}`, { attempt, workflowId: workflowExecution?.workflowId });
  };
  /**
   * Runs a step on the node's session and returns its result with the raw records of its script (for --verbose);
   * under the node lock of `recipe` when the workflow says the deploy holds it (the lock's own runs are not recorded).
   */
  const run = async <T extends object>(
    target: NodeTarget, recipe: PlanRecipe, lock: LockUse | undefined, fn: (s: NodeSession, o: StepOptions) => Promise<T>,
  ): Promise<T & StepRaw> => {
    const session = deps.nodes.session(target);
    const rec = new RawRecorder(session);
    return rec.attach(await nodeStep(every, (o) => fn(rec.session, o), undefined, keeperFor(deps, session, recipe.dir, lock)), lock?.raw !== false);
  };

  return {
    /** Before step 1: the plan must be the one the worker's own nodes.json and profiles make (else Refused, one line). */
    async checkPlan(plan: UpPlan | UpCheckInput | UpStart | UpInputRef | DownPlan): Promise<PlanCheck> {
      const mine = (plan as { action?: unknown } | null)?.action === 'down' ? own.down(plan) : await own.upOf(plan);
      log('plan checked', mine.node);
      // An UpInputRef's steps read the plan again from the workflow input (whose planDigest it is): nobody reads a digest here.
      return isInputRef(plan) ? { node: mine.node } : { node: mine.node, planDigest: planDigest(mine) };
    },
    /** Step 1: read-only checks on the node (recipe, image, mounts, HF cache, other vLLM, connections). */
    async runPreflight(input: UpStepPlan, lock?: LockUse): Promise<PreflightSummary> {
      const plan = await own.upOf(input);
      log('preflight', plan.node);
      return run(plan.target, plan.recipe, lock, async (s, o) => preflightSummary(await steps.runPreflight(s, plan, o)));
    },
    /** Step 2: create the pulse-mkdir directories (mkdir -p: a retry is harmless). */
    async makeDirs(input: UpStepPlan, lock?: LockUse): Promise<MkdirResult> {
      const plan = await own.upOf(input);
      log('mkdir', plan.node);
      return run(plan.target, plan.recipe, lock, async (s, o) => {
        await steps.makeDirs(s, plan, o);
        return {};
      });
    },
    /** Step 3 / down: stop.sh, then make sure the container is gone (a retry finds it gone). */
    async stopServer(input: StopInput, lock?: LockUse): Promise<StopResult> {
      const stop = own.stop(input);
      // The server's address, from the same files as the drain's: stop.sh reads what is in flight right before the signal.
      const { port, bind } = own.drain(input);
      log('stop', stop.node);
      return run(stop.target, stop.recipe, lock, (s, o) => steps.stopServer(s, stop.recipe, o, { port, bind }));
    },
    /** Step 5: back up and write the .env; the node skips it when the identity already matches (no second backup). */
    async writeEnv(input: UpStepPlan, lock?: LockUse): Promise<WriteEnvResult> {
      const plan = await own.upOf(input);
      log('write .env', plan.node);
      return run(plan.target, plan.recipe, lock, (s, o) => steps.writeEnv(s, plan, o));
    },
    /** Step 6: setsid start.sh; the node's atomic marker for deployId makes a retry or crash-resume a no-op. */
    async startServer(input: StartInput, lock?: LockUse): Promise<StartResult> {
      const plan = await own.upOf(input.plan);
      const deployId = classified(() => {
        if (typeof input.deployId !== 'string' || input.deployId === '') throw refusePlan('deployId is not a text');
        return input.deployId;
      });
      log('start', plan.node);
      return run(plan.target, plan.recipe, lock, (s, o) => steps.startServer(s, plan, deployId, o));
    },
    /** Step 8: served model name, max_model_len, KV cache line, pulse-proof texts (read-only). */
    async verifyServer(input: VerifyInput, lock?: LockUse): Promise<VerifyResult> {
      const plan = await own.upOf(input.plan);
      const logPath = classified(() => startLog(plan, input.logPath));
      log('verify', plan.node);
      // Into history the proofs not found only (each is also a warning): the found ones are the plan's own texts again.
      return run(plan.target, plan.recipe, lock, async (s, o) => {
        const v = await steps.verifyServer(s, plan, logPath, o);
        return { ...v, proofs: v.proofs.filter((p) => !p.found) };
      });
    },
    /**
     * Before an up's auto-rollback: the failed start's log and its container's last lines (the start log's when the
     * container is gone), read-only (logs.sh: redacted on the node), never under the lock (the up let it go). What
     * cannot be read is said in `problem`, never thrown: the rollback goes on either way.
     */
    async readFailedStart(input: VerifyInput): Promise<FailedStart> {
      const plan = await own.upOf(input.plan);
      const logPath = classified(() => startLog(plan, input.logPath));
      log('read the failed start', plan.node);
      const node = classified(() => nodeOf(deps.files.load().config, plan.node));
      const session = deps.nodes.session(plan.target);
      const out: FailedStart = { logPath, source: null, name: null, lines: [], known: null, problem: null };
      return nodeStep(every, async (o) => {
        // Bounded: the rollback waits for it, and a node that does not answer must not hold the restore back.
        const signal = (): AbortSignal => AbortSignal.any([...(o.signal ? [o.signal] : []), AbortSignal.timeout(FAILED_START_READ_MS)]);
        const tail = await readLogTail(session, node, 'container', logPath, signal()).catch(async (e: unknown) => {
          out.problem = `the container log could not be read: ${(e as Error).message}`;
          return logPath === null ? null : readLogTail(session, node, 'deploy', logPath, signal()).catch(() => null);
        });
        if (tail === null) return out;
        const source = tail.source.source === 'deploy' ? 'start log' : 'container';
        return { ...out, source, name: tail.source.name, lines: tail.lines, known: tail.known, problem: source === 'container' ? null : out.problem };
      });
    },
  };
}

/** The part of preflight's report that goes into history: what the workflow and the CLI read (PreflightSummary). */
export function preflightSummary(r: PreflightReport): PreflightSummary {
  return {
    ok: r.ok,
    checks: r.checks.filter((c) => !c.ok),
    currentIdentity: r.currentIdentity,
    container: r.container,
    sameIdentityRunning: r.sameIdentityRunning,
    restartReason: r.restartReason,
  };
}

/** verify reads the log start.sh wrote: only a log of this recipe's logs/ folder, as the start step names it. */
function startLog(plan: UpPlan, logPath: unknown): string | null {
  if (logPath === null || logPath === undefined) return null;
  const prefix = `${plan.recipe.dir}/logs/pulse-up-`;
  if (typeof logPath !== 'string' || !logPath.startsWith(prefix) || !/^\d{8}T\d{6}Z\.log$/.test(logPath.slice(prefix.length))) {
    throw refusePlan(`logPath ${JSON.stringify(logPath)} is not a start log of ${plan.recipe.dir}/logs`);
  }
  return logPath;
}
