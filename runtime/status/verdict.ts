/**
 * One health word per node, each with one meaning, and whether the node is healthy (status exits 7, not-ready, when a
 * node it shows is not; 6 when one did not answer). A deploy in progress or a server still starting is not unhealthy:
 * the deploy's own exit code tells how it ends.
 */
import type { HealthWord, NodeStatus } from './types.js';

export type { HealthWord } from './types.js';

export const UNHEALTHY: ReadonlySet<HealthWord> = new Set(['failing', 'failed', 'down', 'unreachable']);

/** The node's health word and whether it is healthy (for the exit code and the colour). */
export function verdictOf(s: Pick<NodeStatus, 'answered' | 'container' | 'health' | 'lastDeploy' | 'deploy' | 'lock'>): { verdict: HealthWord; healthy: boolean } {
  const word = wordOf(s);
  return { verdict: word, healthy: !UNHEALTHY.has(word) };
}

function wordOf(s: Pick<NodeStatus, 'answered' | 'container' | 'health' | 'lastDeploy' | 'deploy' | 'lock'>): HealthWord {
  if (!s.answered) return 'unreachable';
  if (s.health.checked && s.health.ok) return 'serving';
  if (s.deploy || s.lock?.live) return 'deploying';
  const last = s.lastDeploy?.state ?? null;
  if (s.container?.running) {
    if (!s.health.checked) return 'running';
    if (last === 'starting') return 'starting';
    return last === 'failed' ? 'failed' : 'failing';
  }
  if (last === 'failed') return 'failed';
  if (last === 'up' || last === 'starting') return 'down';
  return 'stopped';
}
