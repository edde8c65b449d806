/** The activities that run one node script each: thin, typed input → runtime step (with heartbeats) → result. */
import { Context } from '@temporalio/activity';
import type { NodeSession } from '../runtime/node/types.js';
import type { StepOptions } from '../runtime/steps/index.js';
import type {
  MkdirResult, PlanTarget, PreflightReport, StartResult, StepRaw, StopResult, UpPlan, VerifyResult, WriteEnvResult,
} from '../workflows/types.js';
import type { StartInput, StopInput, VerifyInput } from './contract.js';
import type { ActivityDeps } from './deps.js';
import { nodeStep } from './heartbeat.js';
import { RawRecorder } from './raw.js';

export function nodeStepActivities(deps: ActivityDeps) {
  const every = deps.heartbeatEveryMs ?? 5000;
  const { steps } = deps;
  const log = (what: string, node: string): void => {
    const { attempt, workflowExecution } = Context.current().info;
    deps.logger.info(`${what} on ${node}`, { attempt, workflowId: workflowExecution?.workflowId });
  };
  /** Runs a step on the node's session and returns its result with the raw records of its script (for --verbose). */
  const run = async <T extends object>(target: PlanTarget, fn: (s: NodeSession, o: StepOptions) => Promise<T>): Promise<T & StepRaw> => {
    const rec = new RawRecorder(deps.nodes.session(target));
    return rec.attach(await nodeStep(every, (o) => fn(rec.session, o)));
  };

  return {
    /** Step 1: read-only checks on the node (recipe, image, mounts, HF cache, other vLLM, connections). */
    async runPreflight(plan: UpPlan): Promise<PreflightReport> {
      log('preflight', plan.node);
      return run(plan.target, (s, o) => steps.runPreflight(s, plan, o));
    },
    /** Step 2: create the pulse-mkdir directories (mkdir -p: a retry is harmless). */
    async makeDirs(plan: UpPlan): Promise<MkdirResult> {
      log('mkdir', plan.node);
      return run(plan.target, async (s, o) => {
        await steps.makeDirs(s, plan, o);
        return {};
      });
    },
    /** Step 3 / down: stop.sh, then make sure the container is gone (a retry finds it gone). */
    async stopServer(input: StopInput): Promise<StopResult> {
      log('stop', input.node);
      return run(input.target, (s, o) => steps.stopServer(s, input.recipe, o));
    },
    /** Step 5: back up and write the .env; the node skips it when the identity already matches (no second backup). */
    async writeEnv(plan: UpPlan): Promise<WriteEnvResult> {
      log('write .env', plan.node);
      return run(plan.target, (s, o) => steps.writeEnv(s, plan, o));
    },
    /** Step 6: setsid start.sh; the node's atomic marker for deployId makes a retry or crash-resume a no-op. */
    async startServer(input: StartInput): Promise<StartResult> {
      log('start', input.plan.node);
      return run(input.plan.target, (s, o) => steps.startServer(s, input.plan, input.deployId, o));
    },
    /** Step 8: served model name, max_model_len, KV cache line, pulse-proof texts (read-only). */
    async verifyServer(input: VerifyInput): Promise<VerifyResult> {
      log('verify', input.plan.node);
      return run(input.plan.target, (s, o) => steps.verifyServer(s, input.plan, input.logPath, o));
    },
  };
}
