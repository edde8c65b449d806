/**
 * Rollback plans (issue 14): the plan of bringing a node back to the exact bytes of a .env backup. Pure: the caller
 * reads the backup on the node first (runtime/steps/restore.ts: its text without the HF_TOKEN/API_KEY lines, which
 * stay on the node). The plan is an UpPlan with `restore` set, so a rollback runs the same steps as up (the step
 * catalog) with the backup's own expectations: its mounts and files for preflight, its SERVED_MODEL_NAME,
 * MAX_MODEL_LEN, BIND and PORT for readiness and verify, the proof lines of its profile.
 *
 * The checks before use (each names a line number and a key, never a line's text):
 * - the backup itself, on the node (runtime/scripts/read-backup.sh): a regular file pulse wrote (no symbolic link,
 *   owned by the ssh user, not writable by group or others), whose secret lines pass preflight's secret check;
 *   refused otherwise, --force or not;
 * - pulse wrote it, for this node and this recipe, and nobody edited it: its pulse header is complete, names this
 *   node and the recipe whose dir holds it, and its sha256 is the integrity hash of every line but the header and
 *   the carried secret lines (runtime/config/env-header.ts). Refused unless --force;
 * - what bash will run when start.sh sources it: only blank lines, comments, the carried secret lines and one-line
 *   `KEY=value` assignments (KEY="value", KEY='value' or KEY=word) of a key that is no shell variable, with values
 *   of the characters a profile may use. Anything else (a command, a multi-line value, `$(...)`) is refused, --force
 *   or not: --force restores an edited file, never a line that runs a command;
 * - pulse runs it: a backup of a render-only profile, or in the dir of a recipe no runnable profile uses, is refused.
 */
import path from 'node:path';
import type { NodesConfig } from '../config/nodes.js';
import { nodeOf } from '../config/nodes.js';
import { parseDockerArgs } from '../config/docker-args.js';
import { envBodySha256, parseEnvHeader } from '../config/env-header.js';
import type { Profile } from '../config/profile.js';
import { SHELL_KEYS } from '../config/profile-rules.js';
import { pasteProblem, wordProblem } from '../config/safe.js';
import { diffEnv } from './env-diff.js';
import { PulseError } from '../errors.js';
import type { PlanMount, UpPlan } from '../model/index.js';
import { SECRET_COMMENT_MARK, SECRET_LINE_MARK, SECRET_OTHER_MARK, isSecretKey } from '../secrets.js';
import { DEFAULT_READY_TIMEOUT_S, fleetOf, ownBackupPath, stampOf } from './plan.js';
import { utc } from '../format.js';
import { vllmInt } from '../vllm/int.js';

/** The profile name of a .env without a pulse header that --force restored (it names no profile). */
export const UNMANAGED_PROFILE = 'unmanaged';

/**
 * Why a .env may not be restored without --force, or null when it is a pulse .env of this node and recipe, unedited.
 * `text` is the backup's public text (the node replaced its secret lines by markers).
 */
export function backupProblem(text: string, node: string, recipe: string): string | null {
  const h = parseEnvHeader(text);
  if (!h) return 'it has no pulse header: pulse never wrote it';
  if (h.node !== node) return `its pulse header names node ${h.node}, not ${node}`;
  if (h.recipe !== recipe) return `its pulse header names recipe ${h.recipe}, but it is in the dir of recipe ${recipe}`;
  const body = envBodySha256(text);
  if (body !== h.sha256) return `its lines hash to ${body.slice(0, 12)}, its pulse header says ${h.sha256.slice(0, 12)}: it was edited after pulse wrote it`;
  return null;
}

const ASSIGNMENT = /^(?:export[ \t]+)?([A-Za-z_][A-Za-z0-9_]*)=(?:"([^"]*)"|'([^']*)'|([^"'\s]*))(?:[ \t]+#.*)?[ \t]*$/;

/**
 * The key map of a backup's public text, or the first line that is not in the grammar a restore accepts (see the file
 * comment), by number and key only: the text of a line is never quoted (it could hold a secret pulse did not see).
 */
export function assignmentValues(text: string): { values: Record<string, string> } | { problem: string } {
  const values: Record<string, string> = {};
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  for (const [i, line] of lines.entries()) {
    const at = `line ${i + 1}`;
    if (line === SECRET_LINE_MARK || line === SECRET_COMMENT_MARK || /^[ \t]*(#.*)?$/.test(line)) continue;
    if (line === SECRET_OTHER_MARK) {
      return { problem: `${at} names a secret (HF_TOKEN, API_KEY, VLLM_API_KEY) but is not a line pulse carries (HF_TOKEN or API_KEY, one plain KEY=value line): pulse never restores it` };
    }
    const m = ASSIGNMENT.exec(line);
    if (!m || m[1] === undefined) return { problem: `${at} is not a blank line, a comment or a one-line KEY="value": pulse restores nothing else, --force or not` };
    const key = m[1];
    const quoted = m[2] !== undefined || m[3] !== undefined;
    const value = m[2] ?? m[3] ?? m[4] ?? '';
    const bad = isSecretKey(key) ? `${key} is a secret key`
      : (SHELL_KEYS as readonly string[]).includes(key) || key.startsWith('BASH_FUNC_') ? `${key} is a shell variable that changes how bash runs start.sh`
        : key === 'TP1_CONTAINER_NAME' ? `${key} names the container, which belongs to the recipe` : null;
    if (bad) return { problem: `${at}: ${bad}; pulse never restores it` };
    const p = quoted ? pasteProblem(value) : wordProblem(value);
    if (p) return { problem: `${at}: ${key}: its value ${p}; pulse never restores it` };
    values[key] = value;
  }
  return { values };
}

/** Why pulse may not run what a backup in `recipe`'s dir with the header's `profile` holds, --force or not; or null. */
function runProblem(profiles: ReadonlyMap<string, Profile>, recipe: string, profile: Profile | null): string | null {
  if (profile && !profile.runnable) return `its profile ${profile.name} is render-only (pulse-runnable: false): pulse never runs it`;
  const of = [...profiles.values()].filter((p) => p.recipe === recipe);
  if (!of.some((p) => p.runnable)) {
    return of.length === 0
      ? `no profile of pulse runs recipe ${recipe}: pulse never runs it`
      : `recipe ${recipe} is render-only (its profiles ${of.map((p) => p.name).join(', ')} are): pulse never runs it`;
  }
  return null;
}

function mountsOf(dockerArgs: string): PlanMount[] {
  const parsed = parseDockerArgs(dockerArgs);
  if (!parsed.ok) throw new PulseError('refused', `its EXTRA_DOCKER_ARGS cannot be read: ${parsed.error}`);
  return parsed.pairs.flatMap((p) => (p.kind === 'mount' ? [{ src: p.src, dst: p.dst, mode: p.mode, from: 'profile' as const }] : []));
}

/** What `rollback` was asked for, and the backup text read on the node. */
export interface RestoreOptions {
  node: string;
  backup: string;
  /** The backup's bytes without its secret lines, as read on the node. */
  text: string;
  yes: boolean;
  force: boolean;
  timeoutS?: number | null | undefined;
  /** The backup last known good points to (pruning keeps it), from the node state. */
  protectBackup?: string | null | undefined;
  /** Stop and start the server even when the backup's identity already runs (a watchdog heal: a restart always). */
  restart?: boolean | undefined;
}

/** The recipe (name, config) whose dir holds `file` as its .env or as one of pulse's backups of it. */
function recipeOfBackup(config: NodesConfig, node: string, file: string): [string, NodesConfig['nodes'][string]['recipes'][string]] {
  for (const [name, r] of Object.entries(nodeOf(config, node).recipes)) {
    if (file === path.posix.join(r.dir, '.env') || ownBackupPath(r.dir, file) === file) return [name, r];
  }
  throw new PulseError('refused', `${file} is not a .env backup pulse writes (.env.pulse-bak-<UTC stamp>) in a recipe dir of ${node}`);
}

/** The recipe dir of a backup pulse may restore on `node` (refused: any other path). */
export function backupRecipeDir(config: NodesConfig, node: string, file: string): string {
  return recipeOfBackup(config, node, file)[1].dir;
}

/** The plan of restoring `opts.backup` on `opts.node` (pure); refuses a backup that fails the check without --force. */
export function buildRestorePlan(config: NodesConfig, profiles: ReadonlyMap<string, Profile>, opts: RestoreOptions, now: Date): UpPlan {
  const node = nodeOf(config, opts.node);
  const [recipeName, recipe] = recipeOfBackup(config, opts.node, opts.backup);
  const refuse = (why: string, hint?: string): PulseError =>
    new PulseError('refused', `backup ${opts.backup}: ${why}`, hint ? { hint } : {});
  // What --force cannot pass comes first: a line bash would run, a profile or recipe pulse never runs.
  const read = assignmentValues(opts.text);
  if ('problem' in read) throw refuse(`${read.problem}; nothing was stopped`);
  const { values } = read;
  const header = parseEnvHeader(opts.text);
  const profileName = header?.profile ?? UNMANAGED_PROFILE;
  const profile = profiles.get(profileName) ?? null;
  const cannotRun = runProblem(profiles, recipeName, profile);
  if (cannotRun) throw refuse(`${cannotRun}; nothing was stopped`);
  const problem = backupProblem(opts.text, opts.node, recipeName);
  if (problem && !opts.force) throw refuse(`${problem}; nothing was stopped (add --force to restore it as it is)`);
  let mounts: PlanMount[];
  try {
    mounts = mountsOf(values['EXTRA_DOCKER_ARGS'] ?? '');
  } catch (e) {
    throw refuse(e instanceof Error ? e.message : String(e));
  }
  const ready = vllmInt(values['READY_TIMEOUT_S']) ?? DEFAULT_READY_TIMEOUT_S;
  return {
    action: 'up',
    version: 1,
    node: opts.node,
    target: node.host === 'ssh' ? { name: opts.node, host: 'ssh', ssh: node.ssh } : { name: opts.node, host: 'local' },
    profile: profileName,
    protected: node.protected,
    confirmed: opts.yes,
    experimental: false,
    // The recipe whose dir holds the backup, never the header's: the lock, the stop and the start act on this one.
    recipe: { name: recipeName, dir: recipe.dir, start: recipe.start, stop: recipe.stop, container: recipe.container },
    env: {
      text: opts.text,
      // The identity of the bytes as they are (a forced, edited file: the sha of its body, not its header's).
      identity: { sha256: envBodySha256(opts.text), profile: profileName, overlay: header?.overlay ?? 'none' },
      path: path.posix.join(recipe.dir, '.env'),
      values,
    },
    stamp: stampOf(now),
    renderedAt: utc(now),
    mkdirs: [],
    mounts,
    replacements: [],
    overlay: null,
    proofs: profile ? [...profile.proofs] : [],
    clientNotes: profile ? [...profile.clientNotes] : [],
    expect: {
      servedModelName: values['SERVED_MODEL_NAME'] ?? '',
      maxModelLen: vllmInt(values['MAX_MODEL_LEN']),
      port: Number(values['PORT'] ?? node.env.PORT),
      bind: values['BIND'] ?? node.env.BIND,
    },
    memory: { gateGiB: node.minMemAvailableGiB ?? config.minMemAvailableGiB, timeoutS: config.memTimeoutS },
    readiness: { timeoutS: opts.timeoutS ?? ready + config.readyGraceS },
    restart: opts.restart === true,
    fleet: fleetOf(config),
    rollbackHint: null,
    backups: { keep: node.keepBackups ?? config.keepBackups, protect: ownBackupPath(recipe.dir, opts.protectBackup) },
    restore: { backup: opts.backup, forced: problem },
  };
}

/** `KEY: live → restored` for each key where the live .env and the backup differ (runtime/plan/env-diff.ts, secrets masked). */
export function keyDifference(liveText: string | null, restored: Readonly<Record<string, string>>): string[] {
  return diffEnv(liveText, restored).differences.map((d) => `${d.key}: ${d.old ?? '(unset)'} → ${d.new ?? '(unset)'}`);
}
