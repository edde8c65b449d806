/**
 * An attacker's own workflow, for authority.test.ts: it runs on the attacker's own worker and task queue and
 * schedules pulse's activities by name on pulse's task queues (pulse-deploy, pulse-gateway) with crafted inputs,
 * which anyone who can reach the Temporal server can do. Each call's outcome is returned, never thrown.
 */
import { proxyActivities } from '@temporalio/workflow';

export interface AttackCall {
  name: string;
  activity: string;
  taskQueue: string;
  input: unknown;
}

export interface AttackOutcome {
  name: string;
  ok: boolean;
  /** The failure's type (Refused, ConfigError, ...) and message, when the call failed. */
  type: string | null;
  message: string;
}

interface FailureLike {
  message?: string;
  cause?: { type?: string; message?: string };
}

/** Calls each activity once (no retries: the verdict of one attempt is what counts). */
export async function attackerWorkflow(calls: AttackCall[]): Promise<AttackOutcome[]> {
  const out: AttackOutcome[] = [];
  for (const c of calls) {
    const acts = proxyActivities<Record<string, (input: unknown) => Promise<unknown>>>({
      taskQueue: c.taskQueue,
      startToCloseTimeout: '60s',
      retry: { maximumAttempts: 1 },
    });
    const fn = acts[c.activity];
    if (!fn) throw new Error(`no proxy for ${c.activity}`);
    try {
      await fn(c.input);
      out.push({ name: c.name, ok: true, type: null, message: '' });
    } catch (e) {
      const f = e as FailureLike;
      out.push({ name: c.name, ok: false, type: f.cause?.type ?? null, message: f.cause?.message ?? f.message ?? String(e) });
    }
  }
  return out;
}
