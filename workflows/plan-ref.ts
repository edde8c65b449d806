/**
 * The narrow inputs of an up (issue 11): the workflow input is the CLI's UpStart (the plan without its rendered .env,
 * and the plan's digest) or, from older deploys and hand-made starts, the whole plan; the plan check gets the UpStart
 * as it came (a whole plan: without the .env's key map), and every node step after it only an UpPlanRef (the
 * names the worker rebuilds its own plan from, and the digest of that plan as the check returned it), so neither the
 * plan nor the .env is copied into every step's input. Behind PLAN_REF_PATCH: deploys started before it pass the
 * whole plan to each step, as they did (the activities take both). Since HISTORY_PATCH (definitions.ts) the check
 * and the steps get only an UpInputRef: the worker reads the plan from the workflow's input in its history, so the
 * plan is in history once and no step carries its names. Workflow code: pure, imports types only.
 */
import type { UpCheckInput, UpInputRef, UpPlan, UpPlanRef, UpStart } from '../runtime/model/index.js';

/** patched() id of the narrow step inputs. */
export const PLAN_REF_PATCH = 'pulse-plan-ref';

/** An up's workflow input, either form: the CLI's UpStart (since issue 11) or the whole plan (older deploys, hand-made starts). */
export type UpInput = UpPlan | UpStart;

/** Whether the input is an UpStart (the CLI's, with planDigest), told from a whole plan by its shape alone (deterministic). */
export function isUpStart(plan: UpInput): plan is UpStart {
  return typeof (plan as { planDigest?: unknown }).planDigest === 'string';
}

/** The plan check's input: the plan without the .env's key map (the check compares env.text, which holds it). */
export function upCheckInput(plan: UpPlan): UpCheckInput {
  const { values: _values, ...env } = plan.env;
  return { ...plan, env };
}

/**
 * What the plan check gets: an UpStart as it came (it carries no .env: the check compares the rest and the digest),
 * a whole plan without its key map (PLAN_REF_PATCH) or, before that patch, whole.
 */
export function checkInputOf(plan: UpInput, narrow: boolean): UpInput | UpCheckInput {
  return isUpStart(plan) || !narrow ? plan : upCheckInput(plan);
}

/** What a node step of this up gets: the names of its plan and the digest the plan check returned. */
export function upPlanRef(plan: UpInput, planDigest: string): UpPlanRef {
  const o = plan.overlay;
  return {
    action: plan.action,
    version: plan.version,
    node: plan.node,
    profile: plan.profile,
    renderedAt: plan.renderedAt,
    confirmed: plan.confirmed,
    experimental: plan.experimental,
    restart: plan.restart,
    replacements: plan.replacements,
    memory: plan.memory,
    readiness: plan.readiness,
    rollbackHint: plan.rollbackHint,
    ...(plan.backups ? { backups: plan.backups } : {}),
    ...(plan.autoRollback !== undefined ? { autoRollback: plan.autoRollback } : {}),
    overlay: o ? { dir: o.dir, args: o.args, manifestText: o.manifestText } : null,
    planDigest,
  };
}

/** What the check and every node step of an up get since HISTORY_PATCH: the node; the plan is the workflow's input. */
export function inputRef(plan: UpInput): UpInputRef {
  return { node: plan.node, from: 'workflow input' };
}
