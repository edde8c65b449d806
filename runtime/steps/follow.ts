/**
 * The readiness wait's log follower: `docker logs --follow` of the deploy's container over the node's open link (one
 * more `bash -s` channel on the same connection, logs.sh), each line handed to `onLine` as it arrives and then
 * dropped. Nothing of the log is kept here: the caller reads what it needs from each line (runtime/vllm/phase.ts).
 * The lines leave the node through pulse_redact like all script output.
 */
import type { UpPlan } from '../model/index.js';
import type { NodeSession } from '../node/types.js';
import type { StepOptions } from './run.js';

/** Lines before the follow starts: what the server printed between the last probe and now is read too. */
const FOLLOW_TAIL = 40;

/**
 * Follow the container's log until it ends (docker ends a follow when the container stops: resolves true) or the
 * signal aborts. Resolves false when the log cannot be followed (no such container, a driver that keeps nothing);
 * rejects when the link drops.
 */
export async function followServerLog(session: NodeSession, plan: UpPlan, onLine: (line: string) => void, opts: StepOptions = {}): Promise<boolean> {
  const env = {
    // Both .env files' secrets are redacted from every line: the deploy's own (plan.env.path) and the recipe's.
    PULSE_ENV_PATH: plan.env.path,
    PULSE_RECIPES: `${plan.recipe.name}\t${plan.recipe.dir}\t${plan.recipe.container}`,
    PULSE_LOG_SOURCE: 'container',
    PULSE_LOG_TAIL: String(FOLLOW_TAIL),
    PULSE_LOG_FOLLOW: '1',
    PULSE_LOG_SEGMENTS: '1',
  };
  const result = await session.run('logs', {
    env,
    keep: () => false,
    onRecord: (r) => {
      if (r.kind === 'log' && typeof r['line'] === 'string') onLine(r['line']);
    },
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
  return result.exitCode === 0;
}
