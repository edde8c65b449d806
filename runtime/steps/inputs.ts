/**
 * The exported inputs of each step script, derived from the plan. Pure: the dry-run prints the same text the
 * workflow sends. No input ever holds a secret (the plan has none; the node .env keeps them).
 */
import { createHash } from 'node:crypto';
import type { DownPlan, PlanRecipe, UpPlan } from '../model/index.js';

/** Recipe location and container, shared by every step that touches the recipe. */
export function recipeInputs(recipe: PlanRecipe): Record<string, string> {
  return {
    PULSE_RECIPE_DIR: recipe.dir,
    PULSE_RECIPE_START: recipe.start,
    PULSE_RECIPE_STOP: recipe.stop,
    PULSE_CONTAINER: recipe.container,
  };
}

/** Where the server listens for a probe from the node itself: BIND, unless it is the wildcard. */
export function probeHost(bind: string): string {
  return bind === '' || bind === '0.0.0.0' ? '127.0.0.1' : bind === '::' ? '::1' : bind;
}

/** The port and the addresses of the server: where it binds (BIND as the .env gives it) and where a probe asks. */
function portInputs(plan: UpPlan): Record<string, string> {
  return { PULSE_PORT: String(plan.expect.port), PULSE_BIND: plan.expect.bind, PULSE_PROBE_HOST: probeHost(plan.expect.bind) };
}

function serverInputs(plan: UpPlan): Record<string, string> {
  return { PULSE_ENV_PATH: plan.env.path, ...portInputs(plan) };
}

/** Inputs of the read-only preflight. Mounts travel as `src<TAB>dst<TAB>mode` lines. */
export function preflightInputs(plan: UpPlan): Record<string, string> {
  const v = plan.env.values;
  return {
    ...recipeInputs(plan.recipe),
    ...serverInputs(plan),
    PULSE_IMAGE: v.IMAGE ?? '',
    PULSE_HF_HOME: v.HF_HOME ?? '',
    PULSE_MODEL: v.MODEL ?? '',
    PULSE_CHAT_TEMPLATE: v.CHAT_TEMPLATE ?? '',
    PULSE_MTP_DRAFT_VOCAB: v.MTP_DRAFT_VOCAB ?? '',
    PULSE_MOUNTS: plan.mounts.map((m) => `${m.src}\t${m.dst}\t${m.mode ?? ''}`).join('\n'),
    PULSE_MKDIRS: plan.mkdirs.join('\n'),
  };
}

/** Inputs of the mkdir step: one directory per line. */
export function mkdirInputs(plan: UpPlan): Record<string, string> {
  return { PULSE_MKDIRS: plan.mkdirs.join('\n') };
}

/** Inputs of the memory sample. */
export function memoryInputs(gateGiB: number): Record<string, string> {
  return { PULSE_GATE_GIB: String(gateGiB) };
}

/** Inputs of write-env: the new text as base64 (any byte survives), its identity, the backup stamp and the pruning. */
export function writeEnvInputs(plan: UpPlan): Record<string, string> {
  return {
    PULSE_ENV_PATH: plan.env.path,
    PULSE_NEW_ENV_B64: Buffer.from(plan.env.text, 'utf8').toString('base64'),
    PULSE_NEW_SHA256: plan.env.identity.sha256,
    PULSE_NEW_PROFILE: plan.env.identity.profile,
    PULSE_NEW_OVERLAY: plan.env.identity.overlay,
    PULSE_STAMP: plan.stamp,
    // Pruning: 0 keeps every backup (a plan from before pruning); the protected one is kept whatever the count.
    PULSE_KEEP_BACKUPS: String(plan.backups?.keep ?? 0),
    PULSE_KEEP_BACKUP: plan.backups?.protect ?? '',
    // A rollback copies this backup's bytes (its secrets included, never leaving the node) once they match the text.
    ...(plan.restore ? { PULSE_RESTORE_FROM: plan.restore.backup } : {}),
  };
}

/** Inputs of read-backup: the backup to read and the live .env beside it (the dry-run's key difference). */
export function readBackupInputs(backup: string, envPath: string): Record<string, string> {
  return { PULSE_BACKUP_PATH: backup, PULSE_ENV_PATH: envPath };
}

/** Marker name of a deploy: a hash, so a deployId never reaches a file name unquoted or too long. */
export function deployKey(deployId: string): string {
  return createHash('sha256').update(deployId).digest('hex').slice(0, 24);
}

/** Inputs of start; the deploy key makes a retried start a no-op; the port must be free before the launch. */
export function startInputs(plan: UpPlan, deployId: string): Record<string, string> {
  return { ...recipeInputs(plan.recipe), ...portInputs(plan), PULSE_STAMP: plan.stamp, PULSE_DEPLOY_KEY: deployKey(deployId) };
}

/** Inputs of one readiness probe. */
export function readinessInputs(plan: UpPlan): Record<string, string> {
  return { ...serverInputs(plan), PULSE_SERVED_MODEL_NAME: plan.expect.servedModelName, PULSE_CONTAINER: plan.recipe.container };
}

/** Inputs of verify: proofs one per line, and the log this deploy wrote (may be empty). */
export function verifyInputs(plan: UpPlan, logPath: string | null): Record<string, string> {
  return {
    ...serverInputs(plan),
    PULSE_CONTAINER: plan.recipe.container,
    PULSE_PROOFS: plan.proofs.join('\n'),
    PULSE_LOG_PATH: logPath ?? '',
    PULSE_STAMP: plan.stamp,
  };
}

/** Inputs of stop for either plan. */
export function stopInputs(plan: UpPlan | DownPlan): Record<string, string> {
  return recipeInputs(plan.recipe);
}
