/**
 * The worker is the authority (HOUSE-STYLE 19): every activity that touches a node or the state dir takes only
 * NAMES from its input and derives what it uses from the worker's own nodes.json and profiles (runtime/plan/plan-check.ts).
 * So neither a hand-made workflow input nor another worker's workflow that schedules pulse's activities on pulse's
 * task queues can make a node run a script, write a path, reach a host or put a URL into the gateway file that
 * the worker's own files would not. The files are read again for each activity (a few small files; a stale cache
 * would be a second authority).
 */
import { ownDownPlan, ownDrain, ownStop, ownUpPlan, refusePlan, type OwnDrain, type OwnStop, type WorkerFiles } from '../runtime/plan/plan-check.js';
import { fleetOf } from '../runtime/plan/plan.js';
import { UNMANAGED_PROFILE } from '../runtime/plan/restore.js';
import type { DownPlan, EnvIdentity, FleetEntry, NodeState, UpInputRef, UpPlan } from '../runtime/model/index.js';
import { classified } from './errors.js';
import type { WorkflowInputReader } from './workflow-input.js';

/** Loads the worker's own nodes.json and profiles (worker/deps.ts reads the files; tests may hand in fixed ones). */
export interface WorkerFilesSource {
  load(): WorkerFiles;
}

/** The checks of the activities, each throwing a classified failure (Refused, ConfigError) on a mismatch. */
export interface Authority {
  up(input: unknown): UpPlan;
  /**
   * An up's plan as the plan check and the node steps get it: an UpInputRef (since HISTORY_PATCH) names the node and
   * says the plan is the workflow's input, which is read from its history and checked like any plan; the node must
   * be the plan's. Any other form (a whole plan, an UpStart, an UpPlanRef from older deploys) is checked as it came.
   */
  upOf(input: unknown): Promise<UpPlan>;
  down(input: unknown): DownPlan;
  stop(input: unknown): OwnStop;
  /** The drain's: the stop's, the server's port, HTTP allowed or not, the budget (the input's, else nodes.json's). */
  drain(input: unknown): OwnDrain;
  /** The node state to write and the fleet (the worker's) to rebuild the gateway file from. */
  state(input: unknown): {
    state: Omit<NodeState, 'workflowId' | 'runId' | 'at' | 'lastKnownGood'>; previousIdentity: EnvIdentity | null; fleet: FleetEntry[];
    /** The node's BIND and PORT: where its server listens (the closing block names it). */
    listen: { BIND: string; PORT: string };
  };
}

/** Whether `input` is an UpInputRef: the plan is the workflow's input. */
export function isInputRef(input: unknown): input is UpInputRef {
  return typeof input === 'object' && input !== null && (input as { from?: unknown }).from === 'workflow input';
}

export function authority(source: WorkerFilesSource, readInput: WorkflowInputReader | null = null): Authority {
  const up = (input: unknown): UpPlan => classified(() => ownUpPlan(source.load(), input));
  return {
    up,
    upOf: async (input) => {
      if (!isInputRef(input)) return up(input);
      if (!readInput) return classified(() => { throw refusePlan('this step reads its plan from the workflow input, which this check cannot read'); });
      const plan = up(await readInput());
      return classified(() => {
        if (input.node !== plan.node) throw refusePlan(`the step names node ${JSON.stringify(input.node)}, the workflow input ${JSON.stringify(plan.node)}`);
        return plan;
      });
    },
    down: (input) => classified(() => ownDownPlan(source.load(), input)),
    stop: (input) => classified(() => ownStop(source.load(), input)),
    drain: (input) => classified(() => ownDrain(source.load(), input)),
    state: (input) => classified(() => ownState(source.load(), input)),
  };
}

const STATES = ['up', 'down', 'failed', 'starting'] as const;

/** A profile of the worker's, or the name a forced rollback gives a .env without a pulse header. */
function known(profiles: WorkerFiles['profiles'], name: string): boolean {
  return profiles.has(name) || name === UNMANAGED_PROFILE;
}
const MAX_TEXT = 65536;

function text(o: Record<string, unknown>, key: string): string | null {
  const v = o[key];
  if (v === null || v === undefined) return null;
  if (typeof v !== 'string' || v.length > MAX_TEXT) throw refusePlan(`state input: ${key} is not a short text`);
  return v;
}

function identity(v: unknown, profiles: WorkerFiles['profiles']): NodeState['identity'] {
  if (v === null || v === undefined) return null;
  const o = v as Record<string, unknown>;
  const ok = typeof o === 'object' && typeof o['sha256'] === 'string' && /^[0-9a-f]{64}$/.test(o['sha256'])
    && typeof o['profile'] === 'string' && known(profiles, o['profile']) && typeof o['overlay'] === 'string' && o['overlay'].length <= MAX_TEXT;
  if (!ok) throw refusePlan('state input: identity is not a pulse .env identity of a known profile');
  return { sha256: o['sha256'] as string, profile: o['profile'] as string, overlay: o['overlay'] as string };
}

/** The identity of the .env a deploy replaced: any pulse header (its profile may be gone from the worker's files). */
function previousIdentity(v: unknown): EnvIdentity | null {
  if (v === null || v === undefined) return null;
  const o = v as Record<string, unknown>;
  const ok = typeof o === 'object' && typeof o['sha256'] === 'string' && /^[0-9a-f]{64}$/.test(o['sha256'])
    && typeof o['profile'] === 'string' && o['profile'].length <= 256 && typeof o['overlay'] === 'string' && o['overlay'].length <= MAX_TEXT;
  if (!ok) throw refusePlan('state input: previousIdentity is not a pulse .env identity');
  return { sha256: o['sha256'] as string, profile: o['profile'] as string, overlay: o['overlay'] as string };
}

/**
 * A state write names a node of the worker's nodes.json and a known profile; the fleet of the gateway file is the
 * worker's (fleetOf), whatever the input carries (older workflows still send one; it is ignored).
 */
function ownState(files: WorkerFiles, input: unknown): ReturnType<Authority['state']> {
  if (typeof input !== 'object' || input === null) throw refusePlan('state input is not an object');
  const o = input as Record<string, unknown>;
  const node = text(o, 'node');
  if (node === null || !Object.hasOwn(files.config.nodes, node)) throw refusePlan(`node ${JSON.stringify(node)} is not in the worker's nodes.json (${files.config.file})`);
  const state = STATES.find((s) => s === o['state']);
  const action = o['action'] === 'up' || o['action'] === 'down' ? o['action'] : null;
  if (!state || !action) throw refusePlan('state input: state or action is not one pulse writes');
  const profile = text(o, 'profile');
  if (profile !== null && !known(files.profiles, profile)) throw refusePlan(`state input: profile ${JSON.stringify(profile)} is not among the worker's profiles`);
  const len = o['maxModelLen'];
  if (len !== null && len !== undefined && !(typeof len === 'number' && Number.isInteger(len) && len > 0)) throw refusePlan('state input: maxModelLen is not a whole number');
  return {
    state: {
      node,
      state,
      action,
      profile,
      identity: identity(o['identity'], files.profiles),
      backupPath: text(o, 'backupPath'),
      logPath: text(o, 'logPath'),
      kvCacheLine: text(o, 'kvCacheLine'),
      maxModelLen: typeof len === 'number' ? len : null,
      servedModelName: text(o, 'servedModelName'),
      overlayManifest: o['overlayManifest'] ?? null,
      error: text(o, 'error'),
      previousProfile: text(o, 'previousProfile'),
    },
    previousIdentity: previousIdentity(o['previousIdentity']),
    fleet: fleetOf(files.config),
    listen: { BIND: files.config.nodes[node]!.env.BIND, PORT: files.config.nodes[node]!.env.PORT },
  };
}
