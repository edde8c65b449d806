/**
 * The narrow inputs of an up's node steps (issue 11): the workflow input is the whole plan, stored in history once;
 * the plan check gets it without the .env's key map, and every node step after it only an UpPlanRef (the
 * names the worker rebuilds its own plan from, and the digest of that plan as the check returned it), so neither the
 * plan nor the .env is copied into every step's input. Behind PLAN_REF_PATCH: deploys started before it pass the
 * whole plan to each step, as they did (the activities take both). Workflow code: pure, imports types only.
 */
import type { UpCheckInput, UpPlan, UpPlanRef } from '../runtime/model/index.js';

/** patched() id of the narrow step inputs. */
export const PLAN_REF_PATCH = 'pulse-plan-ref';

/** The plan check's input: the plan without the .env's key map (the check compares env.text, which holds it). */
export function upCheckInput(plan: UpPlan): UpCheckInput {
  const { values: _values, ...env } = plan.env;
  return { ...plan, env };
}

/** What a node step of this up gets: the names of its plan and the digest the plan check returned. */
export function upPlanRef(plan: UpPlan, planDigest: string): UpPlanRef {
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
