/**
 * The drain before a stop (issue 29): one sample of what the running server has in flight (drain.sh), and the rule
 * that says when the drain is over. The activity (activities/drain.ts) polls the sample until the rule says done or
 * the budget runs out; the stop follows either way.
 */
import type { DrainSample, PlanRecipe } from '../model/index.js';
import type { NodeSession } from '../node/types.js';
import { num, lastRecord, runStep, str } from './run.js';
import type { StepOptions } from './run.js';
import { probeHost, recipeInputs } from './inputs.js';

/** What drain.sh needs: the recipe (its .env and container), the server's port and address, and whether HTTP is allowed. */
export interface DrainTarget {
  recipe: PlanRecipe;
  port: number;
  bind: string;
  /** false: a protected node without --yes, which gets no HTTP request (RUNTIME.md): the connections are counted. */
  http: boolean;
}

/** The exported inputs of drain.sh (no secret: the key is read on the node). */
export function drainInputs(t: DrainTarget): Record<string, string> {
  const r = recipeInputs(t.recipe);
  return { PULSE_RECIPE_DIR: r['PULSE_RECIPE_DIR'] ?? t.recipe.dir, PULSE_CONTAINER: r['PULSE_CONTAINER'] ?? t.recipe.container, PULSE_PORT: String(t.port), PULSE_PROBE_HOST: probeHost(t.bind), PULSE_HTTP: t.http ? '1' : '0' };
}

/** One sample on the node. */
export async function sampleDrain(session: NodeSession, t: DrainTarget, opts?: StepOptions): Promise<DrainSample> {
  const result = await runStep(session, 'drain', drainInputs(t), opts);
  const r = lastRecord(result, 'drain');
  const source = str(r, 'source');
  return {
    source: source === 'metrics' || source === 'not-running' ? source : 'connections',
    running: num(r, 'running'),
    waiting: num(r, 'waiting'),
    connections: num(r, 'connections'),
    shutdownTimeoutS: num(r, 'shutdownTimeoutS'),
    detail: str(r, 'detail') ?? `${session.target.name}: step drain reported nothing`,
  };
}

/** How many requests a sample says are in flight: running + waiting, or the open connections of the fallback. */
export function inFlight(s: DrainSample): number {
  if (s.source === 'not-running') return 0;
  if (s.source === 'metrics') return (s.running ?? 0) + (s.waiting ?? 0);
  return s.connections ?? 0;
}

/** The live line's words for a sample: `3 running, 1 waiting`, or `2 open connections (no /metrics)`. */
export function drainWords(s: Pick<DrainSample, 'source' | 'running' | 'waiting' | 'connections'>): string {
  if (s.source === 'not-running') return 'nothing serves';
  if (s.source === 'metrics') return `${s.running ?? 0} running, ${s.waiting ?? 0} waiting`;
  const n = s.connections ?? 0;
  return `${n} open connection${n === 1 ? '' : 's'} (no /metrics)`;
}
