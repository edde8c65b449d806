/**
 * The step catalog: ONE row per step of an up, a down, a rollback, a rollout or a watchdog check, the one home of what
 * a step is called, what it runs and how it is shown. The workflows build their activity proxies (workflows/options.ts
 * stepActivity) and step records from it (workflows/up.ts, down.ts, saga.ts, rollout.ts, watchdog.ts), the dry-runs
 * print its titles (runtime/steps/index.ts stepScripts, cli/rollout-view.ts), the CLI's progress printer its notes
 * (cli/deploy-client/follow-run.ts), and docs/ARCHITECTURE.md's step table is checked against it (test/unit/step-catalog).
 *
 * Why one table and not one module per step: the workflow bundle may take code only from deterministic, import-free
 * modules (eslint.config.js), while a step's inputs and record parsing need Node (base64, sha256) and live on the
 * worker side, in runtime/steps (inputs.ts builds the exports of row.script, actions.ts / checks.ts / preflight.ts
 * parse its records). A row names its script, and its narrow input type is in activities/contract.ts; this file
 * holds everything the workflow, the CLI and the dry-run share, and imports nothing but types.
 */
import type { DrainResult, MemorySample, PreflightReport, StartResult, StopResult, VerifyResult, WriteEnvResult } from '../model/index.js';
import type { StepName } from '../node/types.js';

/**
 * The drain before a stop (issue 29): the default budget of nodes.json drainBudgetS (README "Drain before a stop"
 * argues it) and its ceiling, which is also the drain's activity budget when the workflow does not know the node's.
 */
export const DRAIN_BUDGET_S = 300;
export const DRAIN_BUDGET_MAX_S = 3600;

/** The activity option preset of a step (workflows/options.ts turns it into timeouts and a retry policy). */
export type StepPreset = 'quick' | 'drain' | 'stop' | 'memory-wait' | 'readiness-wait' | 'state' | 'rollout-state' | 'rollout-gate' | 'watchdog-probe' | 'watchdog-state';

export interface StepDef {
  /** The step's id in the progress query, the DeployResult's step list and the error prefix ("<step>: ..."). */
  step: string;
  /** The activity the workflow schedules for it (a name of activities/contract.ts PulseActivities or activities/rollout.ts RolloutActivities). */
  activity: string;
  /** Its activity summary (the UI, the CLI's step line), before " on <node>". */
  label: string;
  /** Its title in the progress query and the workflow's current details. */
  title: string;
  /** The node script it runs (runtime/scripts/<script>.sh), or null for a step on this host. */
  script: StepName | null;
  preset: StepPreset;
  /** The heading the dry-run prints above its script (or, for publish, above what it writes). */
  plan?: string;
  /** The few words shown beside its ✓, from its result (the CLI reads them from history, the workflow keeps them). */
  note?: (result: unknown) => string | null;
  /**
   * Why a step that completed still fails the deploy, from its result (null: it passed). The workflow fails the step
   * with this message; the CLI marks the step ✗ with it, so the step line and the FAILED line say the same.
   */
  verdict?: (result: unknown) => string | null;
  /**
   * pulse's own bookkeeping (the plan check, the node lock, the 'starting' state write): the CLI shows its line only
   * with --verbose, or when it fails, or when `notice` has something to say.
   */
  bookkeeping?: true;
  /** What a bookkeeping step's line must show even without --verbose (its result's news: a corrupt lock cleared). */
  notice?: (result: unknown) => string | null;
  /**
   * Whether a step that completed did something the operator must heed (the drain or the stop cut requests): the CLI
   * marks its line `!` in the warning colour, never a green ✓.
   */
  caution?: (result: unknown) => boolean;
}

type Obj = Record<string, unknown>;
const obj = (r: unknown): Obj => (typeof r === 'object' && r !== null ? (r as Obj) : {});
const text = (r: unknown, key: keyof never | string): string | null => {
  const v = obj(r)[key as string];
  return typeof v === 'string' && v !== '' ? v : null;
};

/** preflight's report: the checks that failed (a precondition failure). */
function preflightVerdict(r: unknown): string | null {
  if (obj(r)['ok' satisfies keyof PreflightReport] !== false) return null;
  const checks = obj(r)['checks' satisfies keyof PreflightReport];
  const failed = (Array.isArray(checks) ? checks : []).map(obj).filter((c) => c['ok'] === false).map((c) => `${text(c, 'name') ?? '?'}: ${text(c, 'detail') ?? ''}`);
  return `preflight failed: ${failed.join('; ')}`;
}

/** verify's result: what the server answered wrong (a verify failure). */
function verifyVerdict(r: unknown): string | null {
  if (obj(r)['ok' satisfies keyof VerifyResult] !== false) return null;
  const problems = obj(r)['problems' satisfies keyof VerifyResult];
  return `verify failed: ${(Array.isArray(problems) ? problems : []).filter((p) => typeof p === 'string').join('; ')}`;
}

function preflightNote(r: unknown): string | null {
  const reason = text(r, 'restartReason' satisfies keyof PreflightReport);
  return reason ? `restart: ${reason}` : null;
}

/**
 * The drain's words: `nothing in flight`, `3 requests finished in 12s`, `budget 300s ran out: 2 requests cut`, and
 * where /metrics could not be read, what pulse counted instead.
 */
function drainNote(r: unknown): string | null {
  const v = obj(r);
  if (v['skipped' satisfies keyof DrainResult] === true) return 'skipped (drain budget 0)';
  const source = text(r, 'source' satisfies keyof DrainResult);
  if (source === null) return null;
  if (source === 'not-running') return 'nothing serves';
  const n = (k: keyof DrainResult): number => (typeof v[k] === 'number' ? (v[k] as number) : 0);
  const req = (x: number): string => `${x} request${x === 1 ? '' : 's'}`;
  const head = v['idle'] === true
    ? (n('atStart') === 0 ? 'nothing in flight' : `${req(n('drained'))} finished in ${n('waitedS')}s`)
    : `drain budget ${n('budgetS')}s ran out: ${req(n('cut'))} cut`;
  return source === 'metrics' ? head : `${head} (${text(r, 'detail') ?? 'no /metrics'})`;
}

/**
 * What the drain must show even without --verbose: everything but "nothing was in flight" (read from /metrics) and
 * "nothing serves". A deploy of a node with nothing in flight shows RUNTIME.md's steps as they are (issue 29); a
 * drain that waited, cut, was skipped or could not read /metrics shows its line.
 */
function drainNotice(r: unknown): string | null {
  const v = obj(r);
  const source = text(r, 'source' satisfies keyof DrainResult);
  if (source === 'not-running') return null;
  if (source === 'metrics' && v['idle'] === true && v['atStart' satisfies keyof DrainResult] === 0 && v['skipped'] !== true) return null;
  return drainNote(r);
}

/** A drain that ended with requests still in flight: the stop after it cuts them. */
function drainCut(r: unknown): boolean {
  const v = obj(r);
  return v['idle' satisfies keyof DrainResult] === false && typeof v['cut'] === 'number' && (v['cut'] as number) > 0;
}

/** How many requests the stop's signal cut (in flight right before it), or 0. */
function stopCut(r: unknown): number {
  const n = obj(r)['atSignal' satisfies keyof StopResult];
  return typeof n === 'number' && n > 0 ? n : 0;
}

/**
 * `stopped`, with docker's state before when it was not plain running, the exit the server stopped with in words,
 * and what its signal cut (the requests in flight right before it).
 */
function stopNote(r: unknown): string | null {
  const v = obj(r)['wasRunning' satisfies keyof StopResult];
  if (typeof v !== 'boolean') return null;
  if (!v) return 'was not running';
  const before = text(r, 'before' satisfies keyof StopResult);
  const exit = text(r, 'exitMeaning' satisfies keyof StopResult);
  const n = stopCut(r);
  const cut = n > 0 ? `; cut ${n} request${n === 1 ? '' : 's'} in flight (${text(r, 'atSignalDetail' satisfies keyof StopResult) ?? 'at the signal'})` : '';
  return `stopped${before && before !== 'running' ? ` (was ${before})` : ''}${exit ? `: ${exit}` : ''}${cut}`;
}

function memoryNote(r: unknown): string | null {
  const v = obj(r)['memAvailableGiB' satisfies keyof MemorySample];
  return typeof v === 'number' ? `MemAvailable ${v} GiB` : null;
}

function writeEnvNote(r: unknown): string | null {
  const v = obj(r);
  if (v['written' satisfies keyof WriteEnvResult] === false) return 'same identity: not written';
  const backup = text(r, 'backupPath');
  const carried = v['carriedSecretLines' satisfies keyof WriteEnvResult];
  return [backup ? `backup ${backup}` : null, typeof carried === 'number' ? `${carried} secret line(s) carried` : null].filter((x) => x !== null).join(', ') || null;
}

function startNote(r: unknown): string | null {
  if (obj(r)['started' satisfies keyof StartResult] === false) return 'already started by this deploy';
  const log = text(r, 'logPath' satisfies keyof StartResult);
  return log ? `log ${log}` : null;
}

/** The KV cache line without vLLM's "INFO <time> [file:line]" prefix. */
function verifyNote(r: unknown): string | null {
  return text(r, 'kvCacheLine' satisfies keyof VerifyResult)?.replace(/^.*?\]\s*/, '') ?? null;
}

/** A corrupt lock this deploy's acquire cleared (runtime/scripts/lock.sh): what it found and how it cleared it. */
function lockNotice(r: unknown): string | null {
  return text(obj(obj(r)['lock']), 'cleared');
}

function lockNote(r: unknown): string | null {
  const lock = obj(obj(r)['lock']);
  if (Object.keys(lock).length === 0) return null;
  const cleared = text(lock, 'cleared');
  return `held since ${text(lock, 'since') ?? '?'}, lease until ${text(lock, 'leaseUntil') ?? '?'}${cleared ? `; ${cleared}` : ''}`;
}

/** Steps that every deploy has around its own: the plan check, the node lock, the compensation. */
export const FRAME_STEPS = {
  check: { step: 'check', activity: 'checkPlan', label: 'check plan', title: "check the plan against the worker's nodes.json and profiles", script: null, preset: 'quick', bookkeeping: true },
  lock: { step: 'lock', activity: 'acquireNodeLock', label: 'node lock', title: 'node lock', script: 'lock', preset: 'quick', note: lockNote, bookkeeping: true, notice: lockNotice },
  unlock: { step: 'unlock', activity: 'releaseNodeLock', label: 'node unlock', title: 'release the node lock', script: 'lock', preset: 'quick', bookkeeping: true },
  /** A cancelled up whose start had begun: its server would go on to serve the abandoned profile (workflows/up.ts). */
  halt: { step: 'halt', activity: 'stopServer', label: 'stop the half-started server', title: 'cancelled: stop the server this up started, so it never serves the abandoned profile', script: 'stop', preset: 'stop', note: stopNote },
  /** An up's auto-rollback is about to remove the failed start's container: its log's last lines first (workflows/auto-rollback.ts). */
  failedStart: { step: 'failed-start', activity: 'readFailedStart', label: "read the failed start's log", title: "auto-rollback: read the failed start's log before its container is removed", script: 'logs', preset: 'quick', bookkeeping: true },
  compensate: { step: 'compensate', activity: 'markFailed', label: 'compensation', title: 'compensation: mark node failed, disable its endpoint', script: null, preset: 'state' },
} as const satisfies Record<string, StepDef>;

/** The nine steps of `pulse model up` (RUNTIME.md "What up does"), in order, and the 'starting' state write. */
export const UP_STEPS = {
  preflight: { step: 'preflight', activity: 'runPreflight', label: '1/9 preflight', title: 'step 1/9 preflight', script: 'preflight', preset: 'quick', plan: '1. preflight (read-only)', note: preflightNote, verdict: preflightVerdict },
  mkdir: { step: 'mkdir', activity: 'makeDirs', label: '2/9 mkdir', title: 'step 2/9 mkdir', script: 'mkdir', preset: 'quick', plan: '2. create the pulse-mkdir directories' },
  /** Part of step 3: before the stop, the requests in flight finish (up to the drain budget); only when a container serves. */
  drain: { step: 'drain', activity: 'drainServer', label: '3/9 drain', title: 'step 3/9 stop: drain the requests in flight first', script: 'drain', preset: 'drain', plan: '3. drain: poll GET /metrics until nothing runs or waits (up to the drain budget)', note: drainNote, bookkeeping: true, notice: drainNotice, caution: drainCut },
  stop: { step: 'stop', activity: 'stopServer', label: '3/9 stop', title: 'step 3/9 stop', script: 'stop', preset: 'stop', plan: '3. stop.sh, then make sure the container is gone', note: stopNote, caution: (r) => stopCut(r) > 0 },
  memory: { step: 'memory', activity: 'waitForMemory', label: '4/9 memory wait', title: 'step 4/9 memory wait', script: 'memory', preset: 'memory-wait', plan: '4. wait until MemAvailable >= {gate} GiB (one sample per poll)', note: memoryNote },
  writeEnv: { step: 'write-env', activity: 'writeEnv', label: '5/9 write .env', title: 'step 5/9 write .env', script: 'write-env', preset: 'quick', plan: '5. back up and write the .env (skipped when the identity is the same)', note: writeEnvNote },
  /** Not a step of its own: the node state 'starting', written inside step 6 just before start.sh runs. */
  starting: { step: 'starting', activity: 'publishState', label: 'state starting', title: 'state starting', script: null, preset: 'state', bookkeeping: true },
  start: { step: 'start', activity: 'startServer', label: '6/9 start', title: 'step 6/9 start', script: 'start', preset: 'quick', plan: '6. start.sh in a new session (setsid, env -i)', note: startNote },
  readiness: { step: 'readiness', activity: 'pollReadiness', label: '7/9 readiness', title: 'step 7/9 readiness', script: 'readiness', preset: 'readiness-wait', plan: '7. probe /v1/models until 200 (one probe per poll)' },
  verify: { step: 'verify', activity: 'verifyServer', label: '8/9 verify', title: 'step 8/9 verify', script: 'verify', preset: 'quick', plan: '8. verify model name, max_model_len, KV cache line, pulse-proof', note: verifyNote, verdict: verifyVerdict },
  publish: { step: 'publish', activity: 'publishState', label: '9/9 publish state', title: 'step 9/9 publish state', script: null, preset: 'state', plan: '9. write the node state and the gateway backend file' },
} as const satisfies Record<string, StepDef>;

/** The two steps of `pulse model down`. */
export const DOWN_STEPS = {
  drain: { step: 'drain', activity: 'drainServer', label: '1/2 drain', title: 'step 1/2 stop: drain the requests in flight first', script: 'drain', preset: 'drain', plan: 'drain: poll GET /metrics until nothing runs or waits (up to the drain budget)', note: drainNote, bookkeeping: true, notice: drainNotice, caution: drainCut },
  stop: { step: 'stop', activity: 'stopServer', label: '1/2 stop', title: 'step 1/2 stop', script: 'stop', preset: 'stop', plan: 'stop: stop.sh, then make sure the container is gone', note: stopNote, caution: (r) => stopCut(r) > 0 },
  publish: { step: 'publish', activity: 'publishState', label: '2/2 publish state', title: 'step 2/2 publish state', script: null, preset: 'state' },
} as const satisfies Record<string, StepDef>;

function backupNote(r: unknown): string | null {
  const plan = obj(obj(r)['plan']);
  const restore = obj(plan['restore']);
  const backup = text(restore, 'backup');
  if (!backup) return null;
  const forced = text(restore, 'forced');
  return `${text(plan, 'profile') ?? '?'} from ${backup}${forced ? ` (forced: ${forced})` : ''}`;
}

function rollbackNote(r: unknown): string | null {
  const p = text(r, 'profile');
  return p ? `serving ${p} again` : null;
}

/**
 * A rollback (`pulse model rollback`, or up's automatic one): first the worker reads and checks the backup on the node
 * and makes the plan from it, then the up steps run with that plan. `auto` is the up's own step: its rollback child.
 */
export const ROLLBACK_STEPS = {
  backup: { step: 'backup', activity: 'planRollback', label: 'check backup', title: 'read and check the backup on the node', script: 'read-backup', preset: 'quick', plan: '0. read the backup on the node and check its pulse header', note: backupNote },
  auto: { step: 'rollback', activity: 'rollbackWorkflow', label: 'auto-rollback', title: 'auto-rollback: bring the previous .env back up', script: null, preset: 'state', note: rollbackNote },
} as const satisfies Record<string, StepDef>;

/** The gate's smoke result (runtime/status/smoke.ts SmokeResult): how fast it answered. */
function smokeNote(r: unknown): string | null {
  if (obj(r)['ok'] !== true) return null;
  const latency = obj(r)['latencyS'];
  return `smoke answered${typeof latency === 'number' ? ` in ${Math.round(latency * 1000)} ms` : ''}`;
}

/** The gate's smoke result: what went wrong (the gate fails, the rollout stops). */
function smokeVerdict(r: unknown): string | null {
  return obj(r)['ok'] === true ? null : `smoke failed: ${text(r, 'error') ?? '?'}`;
}

/**
 * A rollout's own steps (workflows/rollout.ts; issue 15), around each node's child deploy: per step (one node, or up
 * to --max-parallel) the availability guard, per node the worker's plan and, after an up, the gate's smoke request.
 * The guard's summary names the step's nodes (`availability guard on spark2, spark3`).
 */
export const ROLLOUT_STEPS = {
  guard: { step: 'guard', activity: 'guardRolloutStep', label: 'availability guard', title: 'availability guard: the model keeps an enabled endpoint while the step runs', script: null, preset: 'rollout-state' },
  plan: { step: 'plan', activity: 'planRolloutNode', label: 'node plan', title: "the node's plan, made by the worker from its own files", script: null, preset: 'rollout-state', bookkeeping: true },
  smoke: { step: 'smoke', activity: 'smokeRolloutNode', label: 'gate: one smoke request', title: 'gate: one smoke request answers', script: 'smoke', preset: 'rollout-gate', plan: 'one smoke request answers', note: smokeNote, verdict: smokeVerdict },
} as const satisfies Record<string, StepDef>;

/**
 * One run of `pulse model watchdog` (workflows/watchdog.ts; issue 16): the read-only check on the node, then its
 * record where node states live. Not the recipe's own memory watchdog (RUNTIME.md MEMWATCH_*), which runs inside start.sh.
 */
export const WATCHDOG_STEPS = {
  check: { step: 'watchdog-check', activity: 'watchdogProbe', label: 'watchdog check', title: 'watchdog check: the status script on the node (/health and /v1/models where allowed)', script: 'status', preset: 'watchdog-probe' },
  record: { step: 'watchdog-record', activity: 'watchdogRecord', label: 'watchdog record', title: "watchdog record: the node's verdict, streak and endpoint", script: null, preset: 'watchdog-state' },
} as const satisfies Record<string, StepDef>;

const ALL: readonly StepDef[] = [
  ...Object.values(FRAME_STEPS), ...Object.values(UP_STEPS), ...Object.values(DOWN_STEPS), ...Object.values(ROLLBACK_STEPS),
  ...Object.values(ROLLOUT_STEPS), ...Object.values(WATCHDOG_STEPS),
];

/** A step's activity summary on a node: what the UI and the CLI's step line show. */
export function summaryOf(def: StepDef, node: string): string {
  return `${def.label} on ${node}`;
}

/** The row of a scheduled activity, from its type and its summary (one activity type serves several rows). */
export function stepOfActivity(activity: string, summary: string | null): StepDef | null {
  const rows = ALL.filter((d) => d.activity === activity);
  return rows.find((d) => summary !== null && summary.startsWith(`${d.label} on `)) ?? (rows.length === 1 ? (rows[0] ?? null) : null);
}

/** Why a completed step fails the deploy, from its result (null: it passed). */
export function verdictOf(def: StepDef, result: unknown): string | null {
  return def.verdict?.(result) ?? null;
}

/** What a bookkeeping step must show without --verbose, from its result (null: nothing; its line stays hidden). */
export function noticeOf(def: StepDef, result: unknown): string | null {
  return def.notice?.(result) ?? null;
}

/** Whether a finished step's line is marked `!` rather than ✓ (catalog StepDef.caution). */
export function cautionOf(def: StepDef, result: unknown): boolean {
  return def.caution?.(result) === true;
}

/** What a finished step says beside its ✓, from its result (null: nothing to say). */
export function noteOf(def: StepDef, result: unknown): string | null {
  return def.note?.(result) ?? null;
}
