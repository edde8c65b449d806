/**
 * The plans: pure builders of UpPlan / DownPlan (runtime/model/plan.ts), the workflow input and exactly what the
 * dry-run prints, plus the refusals that need no node. No I/O here: the caller loads nodes.json, the profiles
 * and the overlay first.
 */
import path from 'node:path';
import type { DownPlan, FleetEntry, NodeState, PlanRecipe, UpPlan } from '../model/index.js';
import { nodeOf, targetOf, type NodesConfig, type RecipeConfig } from '../config/nodes.js';
import type { Overlay } from '../config/overlay.js';
import type { Profile } from '../config/profile.js';
import { profileOf } from '../config/profiles.js';
import { isLoopback } from '../config/safe.js';
import { PulseError } from '../errors.js';
import { protectedBackup } from '../state/last-good.js';
import { utc } from '../format.js';
import { renderEnv } from './render.js';
import { vllmInt } from '../vllm/int.js';

/** READY_TIMEOUT_S of start.sh when a profile does not set it. */
export const DEFAULT_READY_TIMEOUT_S = 1800;

/** The options of `up` that shape the plan (the overlay already read). */
export interface UpPlanOptions {
  profile: string;
  node: string;
  overlay: Overlay | null;
  overlayWins: boolean;
  /** --yes */
  yes: boolean;
  /** --experimental (default false) */
  experimental?: boolean | undefined;
  restart: boolean;
  timeoutS?: number | undefined;
  minMemGib?: number | undefined;
  /** The command back to the previous profile, from the node state (the caller reads it). */
  rollbackHint?: string | null | undefined;
  /** The backup that last known good points to (runtime/state/last-good.ts), which pruning keeps; from the node state. */
  protectBackup?: string | null | undefined;
}

/** A file name of the form write-env gives its backups: `.env.pulse-bak-<UTC stamp>[-N]`. */
export function isOwnBackupName(name: string): boolean {
  return /^\.env\.pulse-bak-[0-9]{8}T[0-9]{6}Z(-[0-9]+)?$/.test(name);
}

/** A backup path pulse itself writes in this recipe dir, or null (anything else is never protected by name). */
export function ownBackupPath(recipeDir: string, p: string | null | undefined): string | null {
  if (!p) return null;
  const dir = recipeDir.replace(/\/+$/, '');
  const name = p.startsWith(`${dir}/`) ? p.slice(dir.length + 1) : null;
  return name !== null && isOwnBackupName(name) ? p : null;
}

/** The options of `down` that shape its plan. */
export interface DownPlanOptions {
  node: string;
  yes: boolean;
  /** Which recipe's stop.sh; default: the first recipe of the node. */
  recipe?: string | undefined;
}

/** File-name stamp of a UTC time: 20260923T101500Z. */
export function stampOf(now: Date): string {
  return utc(now).replace(/[-:]/g, '');
}

/**
 * The gateway's view of the fleet: a loopback BIND on a node other than the gateway node is unreachable, unless
 * nodes.json gives it a gatewayTunnel (then the tunnel's URL, enabled while `pulse tunnel` says it is up).
 */
export function fleetOf(config: NodesConfig): FleetEntry[] {
  return Object.entries(config.nodes).map(([name, node]) => ({
    node: name,
    gatewayUrl: node.gatewayUrl,
    reachable: !(isLoopback(node.env.BIND) && name !== config.gatewayNode),
    ...(node.gatewayTunnel ? { tunnel: tunnelOf(node.gatewayTunnel.localPort) } : {}),
  }));
}

/** The gateway-side end of a node's tunnel: always the gateway host's loopback, never the LAN. */
export function tunnelOf(localPort: number): { localPort: number; url: string } {
  return { localPort, url: `http://127.0.0.1:${localPort}/v1` };
}

function planRecipe(name: string, r: RecipeConfig): PlanRecipe {
  return { name, dir: r.dir, start: r.start, stop: r.stop, container: r.container };
}

function recipeOf(config: NodesConfig, nodeName: string, recipeName: string, why: string): RecipeConfig {
  const recipes = config.nodes[nodeName]?.recipes ?? {};
  const r = Object.hasOwn(recipes, recipeName) ? recipes[recipeName] : undefined;
  if (!r) {
    throw new PulseError('config', `${why} needs recipe "${recipeName}", which ${config.file}: nodes.${nodeName}.recipes does not have`, {
      hint: `the node has: ${Object.keys(recipes).join(', ') || '(no recipes)'}`,
    });
  }
  return r;
}

function readyTimeout(profile: Profile, values: Record<string, string>): number {
  const raw = values['READY_TIMEOUT_S'];
  if (raw === undefined) return DEFAULT_READY_TIMEOUT_S;
  if (!/^[1-9][0-9]*$/.test(raw)) {
    const line = profile.entries.find((e) => e.key === 'READY_TIMEOUT_S')?.line ?? 1;
    throw new PulseError('config', `${profile.file}:${line}: READY_TIMEOUT_S must be a whole number of seconds, got "${raw}"`);
  }
  return Number(raw);
}

/** Build the plan of `up <profile> --node <node>` (pure; `now` fixes the render time and the stamp). */
export function buildUpPlan(config: NodesConfig, profiles: ReadonlyMap<string, Profile>, opts: UpPlanOptions, now: Date): UpPlan {
  const profile = profileOf(profiles, opts.profile);
  const node = nodeOf(config, opts.node);
  const recipe = recipeOf(config, opts.node, profile.recipe, `profile ${profile.name}`);
  const r = renderEnv({
    profile,
    nodeName: opts.node,
    node,
    recipeName: profile.recipe,
    recipe,
    overlay: opts.overlay,
    overlayWins: opts.overlayWins,
    now,
  });
  const maxLen = r.values['MAX_MODEL_LEN'];
  return {
    action: 'up',
    version: 1,
    node: opts.node,
    target: targetOf(opts.node, node),
    profile: profile.name,
    protected: node.protected,
    confirmed: opts.yes,
    experimental: opts.experimental ?? false,
    recipe: planRecipe(profile.recipe, recipe),
    env: { text: r.text, identity: r.identity, path: path.posix.join(recipe.dir, '.env'), values: r.values },
    stamp: stampOf(now),
    renderedAt: r.renderedAt,
    mkdirs: r.mkdirs,
    mounts: r.mounts,
    replacements: r.replacements,
    overlay: opts.overlay
      ? { dir: opts.overlay.dir, sha256: opts.overlay.sha256, manifest: opts.overlay.manifest, args: opts.overlay.argsText, manifestText: opts.overlay.manifestText }
      : null,
    proofs: r.proofs,
    clientNotes: r.clientNotes,
    expect: {
      servedModelName: r.values['SERVED_MODEL_NAME'] ?? '',
      maxModelLen: vllmInt(maxLen), // 524288, 512K and 524.288k are the same length to vLLM
      port: Number(node.env.PORT),
      bind: node.env.BIND,
    },
    memory: { gateGiB: opts.minMemGib ?? node.minMemAvailableGiB ?? config.minMemAvailableGiB, timeoutS: config.memTimeoutS },
    readiness: { timeoutS: opts.timeoutS ?? readyTimeout(profile, r.values) + config.readyGraceS },
    restart: opts.restart,
    fleet: fleetOf(config),
    rollbackHint: opts.rollbackHint ?? null,
    backups: { keep: node.keepBackups ?? config.keepBackups, protect: ownBackupPath(recipe.dir, opts.protectBackup) },
  };
}

/** Build the plan of `down --node <node>` (pure). */
export function buildDownPlan(config: NodesConfig, opts: DownPlanOptions, now: Date): DownPlan {
  const node = nodeOf(config, opts.node);
  const recipeName = opts.recipe ?? Object.keys(node.recipes)[0];
  if (recipeName === undefined) throw new PulseError('config', `${config.file}: nodes.${opts.node}.recipes: the node has no recipe to stop`);
  const recipe = recipeOf(config, opts.node, recipeName, `down on ${opts.node}`);
  return {
    action: 'down',
    version: 1,
    node: opts.node,
    target: targetOf(opts.node, node),
    protected: node.protected,
    confirmed: opts.yes,
    recipe: planRecipe(recipeName, recipe),
    stamp: stampOf(now),
    fleet: fleetOf(config),
  };
}

/** The flags the refusals depend on besides the plan. */
export interface RefusalFlags {
  /** --experimental */
  experimental: boolean;
  /** A dry-run shows render-only profiles and protected nodes; a real up/down refuses them. */
  dryRun: boolean;
}

/**
 * The refusals that need no node (spec "Safety"), in a fixed order: experimental without --experimental,
 * render-only on a real up, protected node without --yes on a real up/down. The real up and down call it too.
 */
export function checkRefusals(plan: UpPlan | DownPlan, profile: Profile | null, flags: RefusalFlags): void {
  if (plan.action === 'up' && profile) checkProfileRefusals(profile, flags);
  if (plan.protected && !plan.confirmed && !flags.dryRun) {
    throw new PulseError('refused', `node ${plan.node} is protected; add --yes to ${plan.action === 'up' ? 'bring a profile up on' : 'stop the server on'} it`);
  }
}

/**
 * The refusals of the profile alone (experimental, render-only), which hold on every node: a real up checks them before
 * it looks at the node's recipes, so `up tp2` gets one answer (render-only) on every node (issue 30 item 12).
 */
export function checkProfileRefusals(profile: Profile, flags: RefusalFlags): void {
  if (profile.status === 'experimental' && !flags.experimental) {
    throw new PulseError('refused', `profile ${profile.name} is experimental (pulse-status: experimental); add --experimental to use it`);
  }
  if (!profile.runnable && !flags.dryRun) {
    throw new PulseError('refused', `profile ${profile.name} is render-only (pulse-runnable: false); use --dry-run to see its .env`);
  }
}

/** The command that goes back to what the node ran before, from its saved state (the workflow may refine it). */
export function rollbackHintOf(state: NodeState | null, node: string, isProtected: boolean): string | null {
  const yes = isProtected ? ' --yes' : '';
  if (!state) return null;
  if (state.state === 'down') return `pulse model down --node ${node}${yes}`;
  const profile = state.state === 'up' ? state.profile : state.previousProfile;
  return profile ? `pulse model up ${profile} --node ${node}${yes}` : null;
}

/**
 * A real up's plan, as `pulse model up` and a rollout's node both make it: the node's state keeps the backup last
 * known good points to (never pruned, runtime/state/last-good.ts) and gives the rollback command; the refusals checked;
 * --auto-rollback, or the node's autoRollback in nodes.json.
 */
export function upPlanFor(config: NodesConfig, profiles: ReadonlyMap<string, Profile>, opts: Omit<UpPlanOptions, 'protectBackup' | 'rollbackHint'> & { autoRollback: boolean }, state: NodeState | null, now: Date): UpPlan {
  const { autoRollback: asked, ...rest } = opts;
  const profile = profiles.get(opts.profile);
  if (profile) checkProfileRefusals(profile, { experimental: opts.experimental === true, dryRun: false });
  const draft = buildUpPlan(config, profiles, { protectBackup: protectedBackup(state), ...rest }, now);
  checkRefusals(draft, profiles.get(opts.profile) ?? null, { experimental: opts.experimental === true, dryRun: false });
  const autoRollback = asked || config.nodes[opts.node]?.autoRollback === true;
  return { ...draft, rollbackHint: rollbackHintOf(state, opts.node, draft.protected), ...(autoRollback ? { autoRollback } : {}) };
}

/** A real down's plan, as `pulse model down` and a rollout's node both make it: the refusals checked. */
export function downPlanFor(config: NodesConfig, opts: DownPlanOptions, now: Date): DownPlan {
  const plan = buildDownPlan(config, opts, now);
  checkRefusals(plan, null, { experimental: false, dryRun: false });
  return plan;
}
