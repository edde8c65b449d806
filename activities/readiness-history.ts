/**
 * The state step's share of the readiness estimate (issue 18 item 3): a verified up after a start appends its
 * readiness duration to the node's short list, every other write keeps the list, and the `starting` write answers
 * with the estimate for the start that follows (the workflow shows it; runtime/vllm/readiness-eta.ts computes it).
 */
import type { NodeState, ReadinessEstimate } from '../runtime/model/index.js';
import { readinessEstimate, readinessSecondsOf, recordReadiness, samplesOf } from '../runtime/vllm/readiness-eta.js';

type Fields = Pick<NodeState, 'state' | 'action' | 'identity'>;

/** The `readinessHistory` of the state about to be written (absent when there is none to keep). */
export function readinessHistoryAfter(old: NodeState | null, fields: Fields, input: unknown, at: string): Pick<NodeState, 'readinessHistory'> {
  const kept = samplesOf(old);
  const s = readinessSecondsOf((input as { readinessS?: unknown } | null)?.readinessS);
  const list = fields.action === 'up' && fields.state === 'up' && fields.identity && s !== null ? recordReadiness(kept, fields.identity, s, at) : kept;
  return list.length > 0 ? { readinessHistory: list } : {};
}

/** The estimate a `starting` write answers with (nothing for the other writes). */
export function readinessOnStart(old: NodeState | null, fields: Fields): { readiness?: ReadinessEstimate } {
  return fields.state === 'starting' && fields.action === 'up' ? { readiness: readinessEstimate(samplesOf(old), fields.identity) } : {};
}
