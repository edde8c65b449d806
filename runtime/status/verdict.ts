/**
 * One health word per node, each with one meaning, and whether the node is healthy (status exits 7, not-ready, when a
 * node it shows is not; 6 when one did not answer). A deploy in progress or a server still starting is not unhealthy:
 * the deploy's own exit code tells how it ends.
 *
 * A node is never shown healthier than the strongest signal pulse has (HOUSE-STYLE 22): `serving` needs /v1/models
 * 200 with a model AND /health 200 (vLLM answers /v1/models while its engine is dead; only /health says 503), a node
 * state that is not `failed`, and no watchdog that took its endpoint away.
 */
import type { HealthWord, NodeStatus } from './types.js';

export type { HealthWord } from './types.js';

export const UNHEALTHY: ReadonlySet<HealthWord> = new Set(['failing', 'failed', 'down', 'unreachable']);

type Signals = Pick<NodeStatus, 'answered' | 'container' | 'health' | 'lastDeploy' | 'deploy' | 'lock' | 'watchdog'>;

/** The node's health word and whether it is healthy (for the exit code and the colour). */
export function verdictOf(s: Signals): { verdict: HealthWord; healthy: boolean } {
  const word = wordOf(s);
  return { verdict: word, healthy: !UNHEALTHY.has(word) };
}

/** /v1/models answered 200 with a model and /health (when asked) 200 (HealthStatus.ok). */
export function answersHealthy(h: NodeStatus['health']): boolean {
  return h.checked && h.ok;
}

/** Why the watchdog holds the node unhealthy (its endpoint disabled, or healing given up), or null. */
export function watchdogAgainst(s: Pick<NodeStatus, 'watchdog'>): string | null {
  const w = s.watchdog;
  if (!w) return null;
  if (w.disabled) return w.disabled;
  if (w.gaveUp) return w.gaveUp;
  return null;
}

function wordOf(s: Signals): HealthWord {
  if (!s.answered) return 'unreachable';
  const last = s.lastDeploy?.state ?? null;
  const watchdog = watchdogAgainst(s) !== null;
  if (answersHealthy(s.health) && last !== 'failed' && !watchdog) return 'serving';
  if (s.deploy || s.lock?.live) return 'deploying';
  if (last === 'failed') return 'failed';
  if (s.container?.running) {
    if (watchdog) return 'failing';
    if (!s.health.checked) return 'running';
    if (last === 'starting') return 'starting';
    return 'failing';
  }
  if (last === 'up' || last === 'starting') return 'down';
  return 'stopped';
}

/**
 * The health words of a node that can take traffic now: it answers healthy (`serving`), or its container runs and it
 * was not asked (`running`: no HTTP, a protected node without --yes). The availability guard's notion of serving is
 * this and the gateway file's (runtime/fleet/rollout.ts servingEndpoint): an enabled endpoint whose node can.
 */
export const TAKES_TRAFFIC: ReadonlySet<HealthWord> = new Set(['serving', 'running']);

/**
 * The nodes a status run shows unable to take traffic (for the guard's notServing), with their health word. A node
 * that did not answer is not among them: that its ssh failed says nothing about its HTTP, so its endpoint keeps the
 * gateway file's word.
 */
export function notServingOf(nodes: Pick<NodeStatus, 'node' | 'verdict' | 'answered'>[]): Map<string, HealthWord> {
  return new Map(nodes.filter((n) => n.answered && !TAKES_TRAFFIC.has(n.verdict)).map((n) => [n.node, n.verdict]));
}
