/**
 * The scheduled health watch (issue 16), pure: what one check of a node means (judge), the record it leaves in the
 * node state (nextRecord: verdict, streak, the endpoint's disable after N failed checks and enable after N good ones)
 * and whether to heal now (healDecision: at most K heals an hour, with growing pauses). The worker's activities
 * (activities/watchdog.ts) read the node and write the state; the workflow (workflows/watchdog.ts) only sequences.
 */
import type { NodeState, WatchdogCheck, WatchdogRecord, WatchdogRequest, WatchdogVerdict } from '../model/index.js';
import type { StatusRequest } from '../status/collect.js';
import type { NodeStatus } from '../status/types.js';

export const WATCHDOG_DEFAULTS = { everyS: 60, after: 3, healsPerHour: 2 } as const;
/** The shortest interval: one check (an ssh round and one status script) must fit in it on a loaded host. */
export const WATCHDOG_MIN_EVERY_S = 2;
export const WATCHDOG_MAX_EVERY_S = 86_400;
const HOUR_MS = 3_600_000;

/** The schedule (and the workflow ID of its runs) of a node's watchdog. */
export function watchdogScheduleId(node: string): string {
  return `pulse-watchdog-${node}`;
}

/** The status run of one check: read-only, no GPU probe, /health and /v1/models where the protected rules allow HTTP. */
export function watchdogStatusRequest(req: Pick<WatchdogRequest, 'node' | 'confirmed'>): StatusRequest {
  return { node: req.node, http: true, gpuProbe: false, yes: req.confirmed, healthRoute: true };
}

/** The findings of one status run (runtime/status/collect.ts statusOfNode) that a check uses. */
export function checkOf(s: NodeStatus): WatchdogCheck {
  const c = s.container;
  const lock = s.lock?.live ? `deploy ${s.lock.deployId} from ${s.lock.host} (${s.lock.action})` : null;
  return {
    node: s.node, answered: s.answered, error: s.error,
    container: c ? { name: c.name, exists: c.exists, running: c.running, state: c.state, restartCount: c.restartCount, exitMeaning: c.exitMeaning } : null,
    http: s.health.checked, httpSkipped: s.health.checked ? null : s.health.skipped, httpStatus: s.health.httpStatus, healthOk: s.health.modelsOk,
    healthRoute: s.health.healthRoute ?? null,
    servedModels: s.health.servedModels, maxModelLen: s.health.maxModelLen, drift: s.env?.drift ?? false, envProfile: s.env?.profile ?? null,
    memoryWarning: s.memory?.warning ?? null, locked: lock,
    ...(s.dockerDown ? { dockerDown: s.dockerDown } : {}),
  };
}

export interface Judgement {
  verdict: WatchdogVerdict;
  reason: string | null;
  notes: string[];
  /** Why no heal may run now even when the record says heal (healDecision's `blocked`). */
  noHeal?: string;
}

/** What one check means against the node's recorded deploy (its served model and max_model_len). */
export function judge(check: WatchdogCheck, state: NodeState | null): Judgement {
  const skip = (reason: string): Judgement => ({ verdict: 'skipped', reason, notes: [] });
  const down = (reason: string): Judgement => ({ verdict: 'down', reason, notes: notesOf(check, state) });
  if (check.locked) return skip(`a deploy holds the node: ${check.locked}`);
  if (!state) return skip('pulse never deployed here: nothing to watch');
  if (state.state === 'down') return skip('the last deploy was a down: nothing to watch');
  if (state.state === 'starting') return skip('a deploy is starting the server');
  if (!check.answered) return down(check.error ?? 'the node did not answer');
  const c = check.container;
  const dockerDown = check.dockerDown ?? null;
  if (dockerDown) {
    // The container's state is unknown, never "gone". With live-restore its server may still serve: only HTTP tells.
    // A heal cannot help: its up would fail at preflight until the daemon answers again (systemctl start docker).
    if (!check.http || !check.healthOk) return { ...down(dockerDown), noHeal: `no heal while ${dockerDown.replace(/^the /, 'the node\'s ')}: an up cannot start a container; start the daemon (systemctl start docker)` };
  } else {
    if (!c?.exists) return down(`container ${c?.name ?? '?'} is gone`);
    if (!c.running) return down(`container ${c.name} is ${c.state}${c.exitMeaning ? ` (${c.exitMeaning})` : ''}`);
  }
  if (check.http) {
    if (!check.healthOk) return down(`/v1/models answered ${check.httpStatus === null ? 'nothing' : `HTTP ${check.httpStatus}`}`);
    // "good" needs the engine alive: GET /health 200 (a dead engine answers 503 while /v1/models still answers 200).
    const route = check.healthRoute;
    if (route !== 200) return down(`engine not healthy: /health ${route === undefined || route === null ? 'not checked' : route === 0 ? 'answered nothing' : route}`);
    const served = state.servedModelName;
    if (served && !check.servedModels.includes(served)) return down(`/v1/models serves ${check.servedModels.join(', ') || 'no model'}, not ${served}`);
    if (state.maxModelLen !== null && check.maxModelLen !== null && check.maxModelLen !== state.maxModelLen) {
      return down(`/v1/models says max_model_len ${check.maxModelLen}, the recorded profile ${state.maxModelLen}`);
    }
  }
  return { verdict: 'ok', reason: null, notes: notesOf(check, state) };
}

function notesOf(check: WatchdogCheck, state: NodeState | null): string[] {
  const notes: string[] = [];
  if (check.dockerDown && check.http && check.healthOk) notes.push(`${check.dockerDown} (the server still answers: live-restore keeps it running)`);
  if (!check.http && check.httpSkipped) notes.push(`container only: ${check.httpSkipped}`);
  if (check.drift) notes.push('.env drift: edited after pulse rendered it');
  else if (state?.profile && check.envProfile && check.envProfile !== state.profile) notes.push(`.env is ${check.envProfile}, the recorded deploy ${state.profile}`);
  if (check.memoryWarning) notes.push(check.memoryWarning);
  return notes;
}

const EMPTY: Omit<WatchdogRecord, 'at' | 'verdict' | 'reason'> = {
  judged: null, since: null, streak: 0, sinceHeal: 0, disabled: null, heals: [], healsTotal: 0, gaveUp: null, notes: [], restartCount: null,
};

/** The record after this check (at `now`, ISO). Skipped checks change neither the verdict nor its streak. */
export function nextRecord(old: WatchdogRecord | null | undefined, j: Judgement, check: WatchdogCheck, req: Pick<WatchdogRequest, 'after'>, now: string): WatchdogRecord {
  const base = { ...EMPTY, ...(old ?? {}) };
  const nowMs = Date.parse(now);
  const heals = base.heals.filter((t) => nowMs - Date.parse(t) < HOUR_MS);
  const restartCount = check.container?.restartCount ?? null;
  const notes = [...j.notes];
  if (restartCount !== null && base.restartCount !== null && restartCount > base.restartCount) {
    notes.push(`restarted ${restartCount - base.restartCount} time(s) by its restart policy since the last check`);
  }
  const rec: WatchdogRecord = { ...base, at: now, verdict: j.verdict, reason: j.reason, heals, notes, restartCount };
  if (j.verdict === 'skipped') return rec;
  const same = base.judged === j.verdict;
  rec.judged = j.verdict;
  rec.streak = same ? base.streak + 1 : 1;
  rec.since = same && base.since ? base.since : now;
  rec.sinceHeal = base.sinceHeal + 1;
  if (j.verdict === 'down' && rec.streak >= req.after && rec.disabled === null) {
    rec.disabled = `watchdog: ${rec.streak} failed checks in a row since ${rec.since}: ${j.reason ?? 'down'}`;
  }
  if (j.verdict === 'ok') {
    rec.gaveUp = null;
    if (rec.streak >= req.after) rec.disabled = null;
  }
  return rec;
}

export type HealDecision = { heal: true } | { heal: false; why: string | null; gaveUp?: string };

/**
 * Heal now? Only with --heal, after N failed checks in a row and N more since the last heal, never on a protected
 * node without --yes at `on`, at most K heals in any hour, and after a pause that doubles with each heal of the hour
 * (N intervals, 2N, 4N...). When the hour's budget is spent and the node is still down, healing stops (gaveUp).
 * `blocked` (Judgement.noHeal): a heal cannot work now (the Docker daemon does not answer); it is said, not spent.
 */
export function healDecision(rec: WatchdogRecord, req: WatchdogRequest, protectedNode: boolean, now: string, blocked?: string): HealDecision {
  if (!req.heal || rec.judged !== 'down' || rec.verdict !== 'down') return { heal: false, why: null };
  if (rec.gaveUp) return { heal: false, why: `healing stopped: ${rec.gaveUp}` };
  if (rec.streak < req.after || rec.sinceHeal < req.after) return { heal: false, why: null };
  if (blocked) return { heal: false, why: blocked };
  if (protectedNode && !req.confirmed) return { heal: false, why: `${req.node} is protected: the watchdog heals it only when \`on\` was given --yes` };
  if (rec.heals.length >= req.healsPerHour) {
    return { heal: false, why: null, gaveUp: `heal budget spent: ${rec.heals.length} heal(s) in the last hour (at most ${req.healsPerHour}), still down: ${rec.reason ?? 'down'}` };
  }
  const last = rec.heals.at(-1);
  if (last !== undefined) {
    const pauseMs = req.everyS * req.after * 1000 * 2 ** (rec.heals.length - 1);
    const left = Date.parse(last) + pauseMs - Date.parse(now);
    if (left > 0) return { heal: false, why: `next heal in ${Math.ceil(left / 1000)} s at the earliest (pause after heal ${rec.heals.length} of the hour)` };
  }
  return { heal: true };
}

/** The request's fields as pulse sends them, or why not (the worker refuses anything else). */
export function watchdogRequestProblem(o: unknown): string | null {
  const r = (typeof o === 'object' && o !== null ? o : {}) as Record<string, unknown>;
  if (r['action'] !== 'watchdog' || r['version'] !== 1) return 'not a watchdog request of version 1';
  if (typeof r['node'] !== 'string') return 'node: expected a node name';
  const int = (k: string, lo: number, hi: number): boolean => typeof r[k] === 'number' && Number.isInteger(r[k]) && (r[k] as number) >= lo && (r[k] as number) <= hi;
  if (!int('everyS', WATCHDOG_MIN_EVERY_S, WATCHDOG_MAX_EVERY_S)) return `everyS: expected whole seconds from ${WATCHDOG_MIN_EVERY_S} to ${WATCHDOG_MAX_EVERY_S}`;
  if (!int('after', 1, 100)) return 'after: expected 1 to 100 checks';
  if (!int('healsPerHour', 1, 60)) return 'healsPerHour: expected 1 to 60';
  if (typeof r['heal'] !== 'boolean' || typeof r['confirmed'] !== 'boolean') return 'heal, confirmed: expected true or false';
  if (r['clear'] !== undefined && r['clear'] !== true) return 'clear: expected true or absent';
  return null;
}

/** `ok 3 min ago`, `down since 02:14, 5 checks`: the status line of a record (now: for the age). */
export function watchdogLine(rec: WatchdogRecord, now: Date): string {
  const ago = Math.max(0, Math.round((now.getTime() - Date.parse(rec.at)) / 1000));
  const age = ago < 60 ? `${ago} s ago` : ago < 3600 ? `${Math.round(ago / 60)} min ago` : `${Math.round(ago / 3600)} h ago`;
  const hhmm = (iso: string | null): string => (iso ? iso.slice(11, 16) : '?');
  const head = rec.judged === 'down'
    ? `down since ${hhmm(rec.since)}, ${rec.streak} check${rec.streak === 1 ? '' : 's'}${rec.reason && rec.verdict === 'down' ? `: ${rec.reason}` : ''}`
    : rec.judged === 'ok' ? `ok ${age}` : 'no verdict yet';
  const parts = [head];
  if (rec.verdict === 'skipped') parts.push(`last check ${age} skipped: ${rec.reason ?? ''}`);
  if (rec.disabled) parts.push('endpoint disabled');
  if (rec.healsTotal > 0) parts.push(`${rec.heals.length} heal(s) in the last hour, ${rec.healsTotal} in all`);
  if (rec.gaveUp) parts.push(`HEALING STOPPED: ${rec.gaveUp}`);
  // The last check's notes: why it did not heal (a Docker daemon that does not answer), drift, a restart loop. They
  // were only in --json, so the text said nothing of why a down node was left as it was.
  if (rec.notes.length > 0) parts.push(`note: ${rec.notes.join('; ')}`);
  return parts.join('; ');
}
