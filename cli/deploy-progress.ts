/**
 * What status shows of a running deploy beyond its step name: the step's number (`7/9`, from the step title the
 * workflow reports) and a polling step's wait (seconds of its budget, from the pending activity's heartbeat).
 */
import { defaultPayloadConverter } from '@temporalio/common';
import type { DeployProgress, WaitProgress } from '../runtime/model/index.js';
import type { DeployInProgress } from '../runtime/status/types.js';
import { serverLogOf } from '../runtime/vllm/phase.js';
import { estimateOf } from '../runtime/vllm/readiness-eta.js';

/** `step 7/9 readiness` → 7 and 9, from the running step's title. */
export function stepNumber(p: DeployProgress | null): { stepIndex: number | null; stepCount: number | null } {
  const running = p?.steps.filter((s) => s.state === 'running').at(-1);
  const m = running ? /\b(\d+)\/(\d+)\b/.exec(running.title) : null;
  return m ? { stepIndex: Number(m[1]), stepCount: Number(m[2]) } : { stepIndex: null, stepCount: null };
}

interface PendingLike {
  heartbeatDetails?: { payloads?: unknown[] | null } | null;
}

function isWait(v: unknown): v is WaitProgress {
  return typeof v === 'object' && v !== null && 'elapsedS' in v && 'timeoutS' in v && 'step' in v;
}

/** The wait of the pending polling activity, from its last heartbeat; null when none heartbeats one. */
export function waitOf(pending: readonly PendingLike[] | null | undefined): DeployInProgress['wait'] {
  for (const a of pending ?? []) {
    const first = a.heartbeatDetails?.payloads?.[0];
    if (!first) continue;
    try {
      const v: unknown = defaultPayloadConverter.fromPayload(first as never);
      if (isWait(v)) return { step: v.step, elapsedS: v.elapsedS, timeoutS: v.timeoutS, attempt: v.attempt, ...serverLogOf(v), ...estimateOf({ readinessEstimate: v.estimate }) };
    } catch {
      // not a wait's heartbeat
    }
  }
  return null;
}
