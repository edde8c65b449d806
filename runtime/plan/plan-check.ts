/**
 * The worker is the authority (HOUSE-STYLE 19). A plan that arrives as a workflow or activity input only NAMES
 * things: the node, the profile, the overlay's content, the options (--yes, --restart, the wait budgets, the
 * memory gate) and the render time. ownUpPlan/ownDownPlan rebuild the plan from those names and the worker's own
 * nodes.json and profiles, with the CLI's own builder (runtime/plan/plan.ts), and refuse any other difference in one line
 * that names it. Everything that reaches a node (ssh target, recipe paths and scripts, the .env text and path, the
 * mounts, the protected flag, the gateway fleet) is then the worker's, never the input's. Pure: the caller loads
 * the files (activities/authority.ts).
 */
import { createHash } from 'node:crypto';
import type { DownPlan, UpPlan, UpStart } from '../model/index.js';
import type { NodesConfig } from '../config/nodes.js';
import { overlayOf, type Overlay } from '../config/overlay.js';
import type { Profile } from '../config/profile.js';
import { isPulseError, PulseError } from '../errors.js';
import { buildDownPlan, buildUpPlan, checkRefusals } from './plan.js';
import { describeDifferences, differences } from './plan-diff.js';
import { utc } from '../format.js';
import { buildRestorePlan } from './restore.js';

/** The worker's own files, as loaded for one check. */
export interface WorkerFiles {
  config: NodesConfig;
  profiles: ReadonlyMap<string, Profile>;
  /** Last change (ms) of nodes.json and of each profile (by name): tells "changed since this plan" from "made elsewhere". */
  nodesMtimeMs: number | null;
  profileMtimeMs: ReadonlyMap<string, number>;
}

type Obj = Record<string, unknown>;

/** A refusal of the input; `hint` says what to do. */
export function refusePlan(message: string, hint?: string): PulseError {
  return new PulseError('refused', `plan refused by the worker: ${message}`, hint ? { hint } : {});
}

function obj(v: unknown, what: string): Obj {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw refusePlan(`${what} is not an object`);
  return v as Obj;
}

function field<T>(o: Obj, key: string, what: string, ok: (v: unknown) => v is T, kind: string): T {
  const v = o[key];
  if (!ok(v)) throw refusePlan(`${what}${key} is not ${kind}`);
  return v;
}
const isString = (v: unknown): v is string => typeof v === 'string';
const isBool = (v: unknown): v is boolean => typeof v === 'boolean';
const isBudget = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v > 0 && v <= 7 * 86400;
const isGate = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= 4096;

/** The node named by the input, which the worker's nodes.json must have. */
function knownNode(files: WorkerFiles, o: Obj): string {
  const node = field(o, 'node', '', isString, 'a node name');
  if (!Object.hasOwn(files.config.nodes, node)) {
    throw refusePlan(`node ${JSON.stringify(node)} is not in the worker's nodes.json (${files.config.file})`, `its nodes: ${Object.keys(files.config.nodes).join(', ')}`);
  }
  return node;
}

function renderTime(o: Obj): Date {
  const at = field(o, 'renderedAt', '', isString, 'a time');
  const now = new Date(at);
  if (Number.isNaN(now.getTime()) || utc(now) !== at) throw refusePlan(`renderedAt ${JSON.stringify(at)} is not a UTC time like 2026-09-23T10:15:00Z`);
  return now;
}

/** The overlay from the texts in the plan, checked with the rules the CLI applies to a folder. */
function planOverlay(v: unknown): Overlay | null {
  if (v === null) return null;
  const o = obj(v, 'overlay');
  if (!isString(o['args']) || !isString(o['manifestText'])) {
    throw refusePlan('overlay lacks the docker-args.txt and manifest.json texts (a plan from an older pulse)', 'run the command again with this pulse');
  }
  try {
    return overlayOf(field(o, 'dir', 'overlay.', isString, 'a path'), o['args'], o['manifestText'], { args: 'overlay docker-args.txt', manifest: 'overlay manifest.json' });
  } catch (e) {
    throw isPulseError(e) ? refusePlan(e.message) : e;
  }
}

/** The rollback hint is a command pulse prints: only the two forms pulse itself writes, for this node. */
function rollbackHint(o: Obj, node: string): string | null {
  const v = o['rollbackHint'];
  if (v === null) return null;
  const ok = isString(v) && new RegExp(`^pulse model (up [A-Za-z0-9][A-Za-z0-9_.-]*|down) --node ${node.replace(/[.+]/g, '\\$&')}( --yes)?$`).test(v);
  if (!ok) throw refusePlan(`rollbackHint ${JSON.stringify(v)} is not a pulse command for ${node}`);
  return v;
}

/** The protected backup a plan names (a path pulse writes in the recipe dir, checked by buildUpPlan), or null. */
function protectBackup(o: Obj): string | null {
  const b = o['backups'];
  if (b === undefined) return null;
  const v = obj(b, 'backups')['protect'];
  if (v === null) return null;
  return field(obj(b, 'backups'), 'protect', 'backups.', isString, 'a backup path');
}

/** Why the files and the plan differ: an edit after the plan (the normal case), or a plan not made from them. */
function cause(files: WorkerFiles, madeAtMs: number | null, profile: string | null): { why: string; hint: string } {
  if (madeAtMs === null) {
    return { why: "the input differs from the worker's nodes.json (edited during the deploy, or not made by pulse)", hint: 'run the command again once nodes.json is as you want it' };
  }
  const changed: string[] = [];
  if (files.nodesMtimeMs !== null && files.nodesMtimeMs > madeAtMs) changed.push('nodes.json');
  const p = profile === null ? undefined : files.profileMtimeMs.get(profile);
  if (p !== undefined && p > madeAtMs) changed.push(`profile ${profile}`);
  if (changed.length > 0) return { why: `${changed.join(' and ')} changed since this plan was made`, hint: 'run the command again: it plans from the files as they are now' };
  return {
    why: "the plan was not made from the worker's nodes.json and profiles (made by hand, or on a host whose files differ)",
    hint: "a worker runs only what its own nodes.json and profiles allow: plan with pulse on a host with the worker's files",
  };
}

/** Refuse unless `input` equals `own` (the worker's plan, or the part the input carries); names the first differences and their likely cause. */
function refuseDifferences(files: WorkerFiles, input: Obj, own: unknown, madeAtMs: number | null, profile: string | null): void {
  const diffs = differences(input, JSON.parse(JSON.stringify(own)));
  if (diffs.length === 0) return;
  const c = cause(files, madeAtMs, profile);
  throw refusePlan(`${c.why}: ${describeDifferences(diffs)}`, c.hint);
}

/** `input` if it equals the worker's `own` (as JSON); else the refusal naming the differences. */
function sameOrRefuse<T>(files: WorkerFiles, input: Obj, own: T, madeAtMs: number | null, profile: string | null): T {
  refuseDifferences(files, input, own, madeAtMs, profile);
  return JSON.parse(JSON.stringify(own)) as T;
}

/** JSON with every object's keys sorted: one text for one plan, whatever order its keys were set in. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (typeof v === 'object' && v !== null) {
    const o = v as Obj;
    return `{${Object.keys(o).filter((k) => o[k] !== undefined).sort().map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

/** sha256 of the canonical JSON of a plan: what checkPlan returns and every UpPlanRef names (planDigest). */
export function planDigest(plan: UpPlan | DownPlan): string {
  return createHash('sha256').update(canonical(plan), 'utf8').digest('hex');
}

/** The input the CLI starts an up with (UpStart): the plan without its rendered .env, and the plan's digest. */
export function upStart(plan: UpPlan): UpStart {
  const { text: _text, values: _values, ...env } = plan.env;
  return { ...plan, env, planDigest: planDigest(plan) };
}

/** The rebuild itself: a config error of the worker's own files is the worker's refusal too. */
function rebuilt<T>(build: () => T): T {
  try {
    return build();
  } catch (e) {
    throw isPulseError(e) && e.kind !== 'refused' ? refusePlan(e.message, e.hint) : e;
  }
}

/** The worker's own UpPlan for the names in `o` (a plan, a check input or an UpPlanRef: the same keys), and its time. */
function ownUpFromNames(files: WorkerFiles, o: Obj): { own: UpPlan; now: Date; profile: string } {
  if (o['action'] !== 'up' || o['version'] !== 1) throw refusePlan('not an up plan of version 1');
  const node = knownNode(files, o);
  const profile = field(o, 'profile', '', isString, 'a profile name');
  if (!files.profiles.has(profile)) throw refusePlan(`profile ${JSON.stringify(profile)} is not among the worker's profiles`, `its profiles: ${[...files.profiles.keys()].join(', ')}`);
  const now = renderTime(o);
  const memory = obj(o['memory'], 'memory');
  const replacements = o['replacements'];
  if (!Array.isArray(replacements)) throw refusePlan('replacements is not a list');
  const opts = {
    profile,
    node,
    overlay: planOverlay(o['overlay']),
    // --overlay-wins changes the render only where an overlay mount replaced a profile mount.
    overlayWins: replacements.length > 0,
    yes: field(o, 'confirmed', '', isBool, 'true or false'),
    experimental: field(o, 'experimental', '', isBool, 'true or false'),
    restart: field(o, 'restart', '', isBool, 'true or false'),
    timeoutS: field(obj(o['readiness'], 'readiness'), 'timeoutS', 'readiness.', isBudget, 'a number of seconds'),
    minMemGib: field(memory, 'gateGiB', 'memory.', isGate, 'a number of GiB'),
    rollbackHint: rollbackHint(o, node),
    protectBackup: protectBackup(o),
  };
  const memTimeoutS = field(memory, 'timeoutS', 'memory.', isBudget, 'a number of seconds');
  const own = rebuilt(() => buildUpPlan(files.config, files.profiles, opts, now));
  // A plan from a pulse before backup pruning has no `backups`: its write step prunes nothing.
  if (o['backups'] === undefined) delete own.backups;
  // A wait budget is an option like --timeout-s: it changes how long pulse waits, never what runs.
  own.memory.timeoutS = memTimeoutS;
  // --auto-rollback (or nodes.json autoRollback, which the CLI applies) is the user's, like --restart.
  if (o['autoRollback'] !== undefined) own.autoRollback = field(o, 'autoRollback', '', isBool, 'true or false');
  return { own: JSON.parse(JSON.stringify(own)) as UpPlan, now, profile };
}

/**
 * The worker's own UpPlan for what `input` names; refuses any other difference (see the file comment). The input is
 * the whole plan (older deploys' workflow input and steps), the check input (the plan without env.values, the key
 * map of env.text's assignments), an UpStart (the plan without the .env, and its digest: what the CLI starts an up
 * with) or an UpPlanRef; a planDigest must be the digest of the rebuilt plan.
 */
export function ownUpPlan(files: WorkerFiles, input: unknown): UpPlan {
  const o = obj(input, 'the up plan');
  // A rollback's plan (runtime/plan/restore.ts) travels whole: the worker made it from the backup it read on the node.
  if (o['restore'] !== undefined) return ownRestorePlan(files, o);
  const { own, now, profile } = ownUpFromNames(files, o);
  const digest = Object.hasOwn(o, 'planDigest');
  // An UpPlanRef names no env: its digest alone stands for the plan. A plan (or an UpStart) is compared field by field.
  if (!digest || o['env'] !== undefined) {
    const env = obj(o['env'], 'env');
    const { text, values, ...named } = own.env;
    // env.values may be left out (the check input); env.text only where a planDigest stands for it (an UpStart).
    const ownEnv = { ...named, ...(Object.hasOwn(env, 'text') || !digest ? { text } : {}), ...(Object.hasOwn(env, 'values') ? { values } : {}) };
    const { planDigest: _digest, ...fields } = o;
    refuseDifferences(files, fields, { ...own, env: ownEnv }, now.getTime(), profile);
  }
  if (digest && o['planDigest'] !== planDigest(own)) {
    const c = cause(files, now.getTime(), profile);
    const what = o['env'] === undefined ? 'the plan this step rebuilds differs from the one checked before step 1' : "the plan's rendered .env differs from the worker's";
    throw refusePlan(`${c.why}: ${what} (planDigest)`, c.hint);
  }
  // The refusals of the worker's own profile and node: render-only, experimental without --experimental, protected
  // without --yes (the two flags are the user's, as on the CLI).
  checkRefusals(own, files.profiles.get(profile) ?? null, { experimental: own.experimental, dryRun: false });
  return own;
}

/**
 * A rollback's plan, rebuilt from what it names (node, backup, --yes, --force, the wait budgets) and its backup
 * text. The text itself is checked where it is used: the write step restores the backup's bytes only when, on the
 * node, they are this text (write-env.sh), so a hand-made plan can never make a node run a .env that is not a
 * backup in its recipe dir.
 */
function ownRestorePlan(files: WorkerFiles, o: Obj): UpPlan {
  const node = knownNode(files, o);
  const restore = obj(o['restore'], 'restore');
  const env = obj(o['env'], 'env');
  const now = renderTime(o);
  const backups = o['backups'] === undefined ? null : obj(o['backups'], 'backups');
  const opts = {
    node,
    backup: field(restore, 'backup', 'restore.', isString, 'a path'),
    text: field(env, 'text', 'env.', isString, 'a text'),
    yes: field(o, 'confirmed', '', isBool, 'true or false'),
    force: restore['forced'] !== null,
    timeoutS: field(obj(o['readiness'], 'readiness'), 'timeoutS', 'readiness.', isBudget, 'a number of seconds'),
    protectBackup: backups && isString(backups['protect']) ? backups['protect'] : null,
    restart: o['restart'] === undefined ? false : field(o, 'restart', '', isBool, 'true or false'),
  };
  const own = rebuilt(() => buildRestorePlan(files.config, files.profiles, opts, now));
  own.memory = { gateGiB: field(obj(o['memory'], 'memory'), 'gateGiB', 'memory.', isGate, 'a number of GiB'), timeoutS: field(obj(o['memory'], 'memory'), 'timeoutS', 'memory.', isBudget, 'a number of seconds') };
  const mine = sameOrRefuse(files, o, own, null, null);
  checkRefusals(mine, null, { experimental: false, dryRun: false });
  return mine;
}

/** The time of a file-name stamp (20260923T101500Z). */
function stampTime(stamp: string): Date {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(stamp);
  const at = m ? new Date(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}Z`) : new Date(NaN);
  if (Number.isNaN(at.getTime())) throw refusePlan(`stamp ${JSON.stringify(stamp)} is not a UTC stamp like 20260923T101500Z`);
  return at;
}

/** The worker's own DownPlan for what `input` names (node, recipe name, --yes, time). */
export function ownDownPlan(files: WorkerFiles, input: unknown): DownPlan {
  const o = obj(input, 'the down plan');
  if (o['action'] !== 'down' || o['version'] !== 1) throw refusePlan('not a down plan of version 1');
  const node = knownNode(files, o);
  const recipe = field(obj(o['recipe'], 'recipe'), 'name', 'recipe.', isString, 'a recipe name');
  const now = stampTime(field(o, 'stamp', '', isString, 'a stamp'));
  const own = rebuilt(() => buildDownPlan(files.config, { node, yes: field(o, 'confirmed', '', isBool, 'true or false'), recipe }, now));
  const mine = sameOrRefuse(files, o, own, now.getTime(), null);
  checkRefusals(mine, null, { experimental: false, dryRun: false });
  return mine;
}

/** What a stop step uses, from the worker's nodes.json: the node's target and the named recipe's paths. */
export interface OwnStop {
  node: string;
  target: UpPlan['target'];
  recipe: UpPlan['recipe'];
}

/**
 * The stop step's input ({node, recipe, confirmed}; older workflows add target and the recipe's paths) checked like
 * a plan: the target and recipe used are the worker's own for that node and recipe name, any target or recipe field
 * the input carries must equal them, and a protected node needs confirmed (the user's --yes).
 */
export function ownStop(files: WorkerFiles, input: unknown): OwnStop {
  const o = obj(input, 'the stop input');
  const node = knownNode(files, o);
  const given = obj(o['recipe'], 'recipe');
  const recipe = field(given, 'name', 'recipe.', isString, 'a recipe name');
  const plan = rebuilt(() => buildDownPlan(files.config, { node, yes: o['confirmed'] === true, recipe }, new Date(0)));
  // Only what the input names is compared (since issue 11 the workflows send the names alone); what runs is the worker's.
  const mine: Obj = { ...plan.recipe };
  const ownRecipe = Object.fromEntries(Object.keys(given).map((k) => [k, mine[k]]));
  const hasTarget = o['target'] !== undefined;
  refuseDifferences(files, { node, ...(hasTarget ? { target: o['target'] } : {}), recipe: given }, { node, ...(hasTarget ? { target: plan.target } : {}), recipe: ownRecipe }, null, null);
  if (plan.protected && o['confirmed'] !== true) throw refusePlan(`${node} is protected: its stop step needs --yes (confirmed)`);
  return JSON.parse(JSON.stringify({ node, target: plan.target, recipe: plan.recipe })) as OwnStop;
}

/** What a drain step uses, from the worker's nodes.json: the stop's target and recipe, the server's port, the budget. */
export interface OwnDrain extends OwnStop {
  port: number;
  bind: string;
  /** The node's HTTP allowance: false for a protected node without --yes (it gets no HTTP request, RUNTIME.md). */
  http: boolean;
  /** The budget (s): the input's (--drain-s), else the node's drainBudgetS, else the top level's. 0: no drain. */
  budgetS: number;
}

/**
 * The drain step's input (a stop input and, from --drain-s, `budgetS`) checked like the stop's: what runs is the worker's
 * own. Read-only, so a protected node without --yes is not refused here: it is drained without HTTP (the stop after it
 * refuses it as always).
 */
export function ownDrain(files: WorkerFiles, input: unknown): OwnDrain {
  const o = obj(input, 'the drain input');
  const stop = ownStop(files, { ...o, confirmed: true });
  const node = files.config.nodes[stop.node];
  if (!node) throw refusePlan(`node ${JSON.stringify(stop.node)} is not in the worker's nodes.json`);
  const asked = o['budgetS'];
  if (asked !== undefined && !(typeof asked === 'number' && Number.isInteger(asked) && asked >= 0 && asked <= 7 * 86400)) throw refusePlan('budgetS is not a whole number of seconds');
  return {
    ...stop,
    port: Number(node.env.PORT),
    bind: node.env.BIND,
    http: !node.protected || o['confirmed'] === true,
    budgetS: typeof asked === 'number' ? asked : (node.drainBudgetS ?? files.config.drainBudgetS),
  };
}
