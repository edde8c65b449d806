/**
 * The text of a rollout (issue 15): the dry-run's plan (order, each node's .env difference, the gates, which
 * endpoints serve at each step) and the closing table of node outcomes. Pure: the data comes from
 * cli/commands/rollout.ts.
 */
import type { DiffReport } from './diff-report.js';
import { diffText } from './diff-report.js';
import type { PlannedStep } from '../runtime/fleet/rollout.js';
import { EXIT_DETACHED, FAILURES } from '../runtime/failures.js';
import type { RolloutProgress, RolloutRequest } from '../runtime/model/index.js';
import { ROLLOUT_STEPS } from '../runtime/steps/catalog.js';

export interface RolloutPlanView {
  request: RolloutRequest;
  workflowId: string;
  protectedNodes: string[];
  steps: PlannedStep[];
  /** Per node: its diff against the running .env (read-only, as `pulse model diff`), or why it could not be read. */
  diffs: Record<string, DiffReport | { error: string }>;
  /** Nodes the gateway file enables that cannot take traffic now (their status), and why: not counted as serving. */
  notCounted?: Record<string, string>;
}

const what = (r: Pick<RolloutRequest, 'action' | 'profile'>): string => (r.action === 'up' ? `up ${r.profile ?? '?'}` : 'down');

/** The dry-run's text. */
export function rolloutPlanText(v: RolloutPlanView): string {
  const r = v.request;
  const lines = [
    `rollout ${what(r)} on ${r.nodes.join(' → ')} (workflow ${v.workflowId}; ${r.maxParallel} node(s) at a time)`,
    v.protectedNodes.length === 0
      ? 'protected nodes: none'
      : `protected nodes: ${v.protectedNodes.join(', ')} — ${r.confirmed ? '--yes given' : 'needs --yes (once, for the whole rollout)'}`,
    `gate after each node: ${r.action === 'up' ? `the child's verify passes and ${ROLLOUT_STEPS.smoke.plan}` : 'the container is gone'}; a failed gate stops the rollout and leaves the later nodes untouched${r.autoRollback ? ' (--auto-rollback: the failed node goes back to its previous .env)' : ''}`,
    ...Object.entries(v.notCounted ?? {}).map(([n, why]) => `not counted as serving: ${n} (${why})`),
    '',
  ];
  v.steps.forEach((s, i) => {
    lines.push(`step ${i + 1}: ${s.nodes.join(', ')}`);
    lines.push(`  serving meanwhile: ${s.serving.length > 0 ? s.serving.join(', ') : 'NO endpoint'}`);
    if (s.refused) lines.push(`  REFUSED by the ${ROLLOUT_STEPS.guard.label}: ${s.refused}`);
    for (const n of s.nodes) {
      const d = v.diffs[n];
      if (r.action === 'down') lines.push(`  ${n}: the server stops`);
      else if (!d) continue;
      else if ('error' in d) lines.push(`  ${n}: running .env not read (${d.error})`);
      else lines.push(...diffText(d).trimEnd().split('\n').map((l) => `  ${l}`));
    }
  });
  const planned = v.steps.flatMap((s) => s.nodes);
  const never = r.nodes.filter((n) => !planned.includes(n));
  if (never.length > 0) lines.push(`not reached: ${never.join(', ')}`);
  return `${lines.join('\n')}\n`;
}

/** The closing table: one line per node with its outcome and gate. */
export function rolloutResultText(p: RolloutProgress): string {
  const w = Math.max(4, ...p.nodes.map((n) => n.node.length));
  const lines = [`rollout ${what(p)}: ${p.outcome.toUpperCase()}${p.error ? ` — ${p.error}` : ''}`];
  for (const n of p.nodes) lines.push(`  ${n.node.padEnd(w)}  ${n.status.padEnd(11)}  ${n.gate ?? n.error ?? ''}`);
  return `${lines.join('\n')}\n`;
}

/** The node outcomes in one cell (history's row of a rollout): `spark2 succeeded, spark1 skipped`. */
export function nodeOutcomes(p: Pick<RolloutProgress, 'nodes'>): string {
  return p.nodes.map((n) => `${n.node} ${n.status}`).join(', ');
}

/** The exit code of a rollout's end. */
export function rolloutExit(p: RolloutProgress | null): number {
  if (!p) return FAILURES.internal.exit;
  if (p.outcome === 'succeeded') return 0;
  if (p.outcome === 'refused') return FAILURES.refused.exit;
  if (p.outcome === 'cancelled' || p.outcome === 'stopped') return FAILURES.cancelled.exit;
  return FAILURES.script.exit;
}

/** A follow the user left with Ctrl-C: the rollout goes on. */
export const ROLLOUT_DETACHED = EXIT_DETACHED;

/** history's outcome of a rollout (its result, or its failure's details): the outcome, each node's, and its nodes. */
export function rolloutOutcome(r: unknown): { result: string; ok: boolean; nodeState: null; error: string | null; undid: null; rolloutNodes: string } | null {
  if (!r || typeof r !== 'object' || !('nodes' in r) || !('outcome' in r) || !Array.isArray(r.nodes)) return null;
  const p = r as RolloutProgress;
  return { result: `${p.outcome}: ${nodeOutcomes(p)}`, ok: p.outcome === 'succeeded', nodeState: null, error: p.error, undid: null, rolloutNodes: p.nodes.map((n) => n.node).join(',') };
}

/** The node column of a history row that is a rollout (null for any other). */
export function rolloutNodes(o: { rolloutNodes?: string }): string | null {
  return o.rolloutNodes ?? null;
}
