/** The activities that run one node script each: thin, typed input → runtime step (with heartbeats) → result. */
import { Context } from '@temporalio/activity';
import type { PreflightReport, StartResult, StopResult, UpPlan, VerifyResult, WriteEnvResult } from '../workflows/types.js';
import type { StartInput, StopInput, VerifyInput } from './contract.js';
import type { ActivityDeps } from './deps.js';
import { nodeStep } from './heartbeat.js';

export function nodeStepActivities(deps: ActivityDeps) {
  const every = deps.heartbeatEveryMs ?? 5000;
  const { steps } = deps;
  const log = (what: string, node: string): void => {
    const { attempt, workflowExecution } = Context.current().info;
    deps.logger.info(`${what} on ${node}`, { attempt, workflowId: workflowExecution?.workflowId });
  };

  return {
    /** Step 1: read-only checks on the node (recipe, image, mounts, HF cache, other vLLM, connections). */
    async runPreflight(plan: UpPlan): Promise<PreflightReport> {
      log('preflight', plan.node);
      return nodeStep(every, (o) => steps.runPreflight(deps.nodes.session(plan.target), plan, o));
    },
    /** Step 2: create the pulse-mkdir directories (mkdir -p: a retry is harmless). */
    async makeDirs(plan: UpPlan): Promise<void> {
      log('mkdir', plan.node);
      await nodeStep(every, (o) => steps.makeDirs(deps.nodes.session(plan.target), plan, o));
    },
    /** Step 3 / down: stop.sh, then make sure the container is gone (a retry finds it gone). */
    async stopServer(input: StopInput): Promise<StopResult> {
      log('stop', input.node);
      return nodeStep(every, (o) => steps.stopServer(deps.nodes.session(input.target), input.recipe, o));
    },
    /** Step 5: back up and write the .env; the node skips it when the identity already matches (no second backup). */
    async writeEnv(plan: UpPlan): Promise<WriteEnvResult> {
      log('write .env', plan.node);
      return nodeStep(every, (o) => steps.writeEnv(deps.nodes.session(plan.target), plan, o));
    },
    /** Step 6: setsid start.sh; the node's atomic marker for deployId makes a retry or crash-resume a no-op. */
    async startServer(input: StartInput): Promise<StartResult> {
      log('start', input.plan.node);
      return nodeStep(every, (o) => steps.startServer(deps.nodes.session(input.plan.target), input.plan, input.deployId, o));
    },
    /** Step 8: served model name, max_model_len, KV cache line, pulse-proof texts (read-only). */
    async verifyServer(input: VerifyInput): Promise<VerifyResult> {
      log('verify', input.plan.node);
      return nodeStep(every, (o) => steps.verifyServer(deps.nodes.session(input.plan.target), input.plan, input.logPath, o));
    },
  };
}
