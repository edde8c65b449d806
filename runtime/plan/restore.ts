/**
 * Rollback plans (issue 14): the plan of bringing a node back to the exact bytes of a .env backup. Pure: the caller
 * reads the backup on the node first (runtime/steps/restore.ts: its text without the HF_TOKEN/API_KEY lines, which
 * stay on the node). The plan is an UpPlan with `restore` set, so a rollback runs the same steps as up (the step
 * catalog) with the backup's own expectations: its mounts and files for preflight, its SERVED_MODEL_NAME,
 * MAX_MODEL_LEN, BIND and PORT for readiness and verify, the proof lines of its profile.
 *
 * The check before use: the backup's pulse header must be complete, name this node, and its sha256 must be the
 * sha256 of its assignment lines. A backup edited by hand or never written by pulse is refused unless --force.
 */
import path from 'node:path';
import type { NodesConfig } from '../config/nodes.js';
import { nodeOf } from '../config/nodes.js';
import { parseDockerArgs } from '../config/docker-args.js';
import { assignmentLines, envBodySha256, parseEnvHeader } from '../config/env-header.js';
import type { Profile } from '../config/profile.js';
import { diffEnv } from './env-diff.js';
import { PulseError } from '../errors.js';
import type { PlanMount, UpPlan } from '../model/index.js';
import { DEFAULT_READY_TIMEOUT_S, fleetOf, ownBackupPath, stampOf } from './plan.js';
import { utc } from '../format.js';
import { vllmInt } from '../vllm/int.js';

/** The profile name of a .env without a pulse header that --force restored (it names no profile). */
export const UNMANAGED_PROFILE = 'unmanaged';

/** Why a .env may not be restored without --force, or null when it is a pulse .env of this node, unedited. */
export function backupProblem(text: string, node: string): string | null {
  const h = parseEnvHeader(text);
  if (!h) return 'it has no pulse header: pulse never wrote it';
  if (h.node !== node) return `its pulse header names node ${h.node}, not ${node}`;
  const body = envBodySha256(text);
  if (body !== h.sha256) return `its assignment lines hash to ${body.slice(0, 12)}, its pulse header says ${h.sha256.slice(0, 12)}: it was edited after pulse wrote it`;
  return null;
}

/** The key map of a .env's assignment lines (KEY="value", KEY='value' or KEY=word, one line each), or a problem. */
export function assignmentValues(text: string): { values: Record<string, string> } | { problem: string } {
  const values: Record<string, string> = {};
  for (const line of assignmentLines(text)) {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)=(?:"([^"$`\\]*)"|'([^']*)'|([A-Za-z0-9_./:=,@+%-]*))\s*$/.exec(line);
    if (!m || m[1] === undefined) return { problem: `line ${JSON.stringify(line.slice(0, 60))} is not KEY="value" on one line` };
    values[m[1]] = m[2] ?? m[3] ?? m[4] ?? '';
  }
  return { values };
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
  const problem = backupProblem(opts.text, opts.node);
  if (problem && !opts.force) throw refuse(`${problem}; nothing was stopped (add --force to restore it as it is)`);
  const read = assignmentValues(opts.text);
  if ('problem' in read) throw refuse(read.problem);
  const { values } = read;
  const header = parseEnvHeader(opts.text);
  const profileName = header?.profile ?? UNMANAGED_PROFILE;
  const profile = profiles.get(profileName) ?? null;
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
    recipe: { name: header?.recipe ?? recipeName, dir: recipe.dir, start: recipe.start, stop: recipe.stop, container: recipe.container },
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
