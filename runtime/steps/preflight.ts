/** Step 1, read-only: the node's findings, the .env diff, and the same-identity decision. */
import { createHash } from 'node:crypto';
import type { ContainerInfo, EnvDiff, EnvIdentity, PreflightReport, UpPlan } from '../model/index.js';
import type { NodeSession, RemoteResult } from '../node/types.js';
import { SCRIPT_EXIT } from '../node/types.js';
import { sameIdentity } from '../config/env-header.js';
import { preflightInputs } from './inputs.js';
import { bool, lastRecord, num, recordsOf, runStep, str } from './run.js';
import type { StepOptions } from './run.js';

const sha256 = (s: string): string => createHash('sha256').update(s, 'utf8').digest('hex');
/** Values compare with white space runs collapsed (the script's pulse_env_norm does the same on the node). */
const norm = (s: string): string => s.split(/\s+/).filter((w) => w !== '').join(' ');

/** Key-map difference between the node .env (key → sha256 of normalised value, as the script reports) and the render. */
export function diffEnv(current: Map<string, string>, rendered: Record<string, string>): EnvDiff {
  const added = Object.keys(rendered).filter((k) => !current.has(k));
  const removed = [...current.keys()].filter((k) => !(k in rendered));
  const changed = Object.keys(rendered).filter((k) => current.has(k) && current.get(k) !== sha256(norm(rendered[k] ?? '')));
  return { added: added.sort(), removed: removed.sort(), changed: changed.sort() };
}

/** Docker's StartedAt (nanosecond ISO) as epoch seconds, or null. */
export function startedEpoch(startedAt: string | null): number | null {
  if (!startedAt || startedAt.startsWith('0001-')) return null;
  const ms = Date.parse(startedAt.replace(/(\.\d{3})\d+/, '$1'));
  if (!Number.isFinite(ms)) return null;
  const frac = /\.(\d+)/.exec(startedAt)?.[1] ?? '';
  return Math.floor(ms / 1000) + (frac ? Number(`0.${frac}`) : 0);
}


/** Decide the same-identity skip: running, same identity, body intact, started after the .env and every mount. */
export function decideSkip(plan: UpPlan, r: Omit<PreflightReport, 'ok' | 'sameIdentityRunning' | 'restartReason'>): { same: boolean; reason: string | null } {
  if (!sameIdentity(r.currentIdentity, plan.env.identity) || !r.container?.running) return { same: false, reason: null };
  if (plan.restart) return { same: false, reason: '--restart given' };
  if (!r.currentBodyMatches) return { same: false, reason: 'the node .env was edited after the render (body does not match pulse-sha256)' };
  const started = startedEpoch(r.container.startedAt);
  if (started === null) return { same: false, reason: 'the container start time is unknown' };
  if (r.envCtime !== null && r.envCtime >= started) return { same: false, reason: 'the .env changed after the container started' };
  const newer = r.mountCtimes.filter((m) => m.ctime >= started).map((m) => m.path);
  if (newer.length > 0) return { same: false, reason: `mounted files changed after the container started: ${newer.join(', ')}` };
  return { same: true, reason: null };
}

function container(result: RemoteResult): ContainerInfo | null {
  const r = lastRecord(result, 'container');
  if (!r) return null;
  return { name: str(r, 'name') ?? '', running: bool(r, 'running'), status: str(r, 'status') ?? '', image: str(r, 'image') ?? '', startedAt: str(r, 'startedAt') || null };
}

function identity(result: RemoteResult): { id: EnvIdentity | null; bodyMatches: boolean; ctime: number | null } {
  const r = lastRecord(result, 'env-file');
  if (!r || !bool(r, 'exists')) return { id: null, bodyMatches: false, ctime: null };
  const header = str(r, 'sha256');
  const profile = str(r, 'profile');
  const id = header && profile ? { sha256: header, profile, overlay: str(r, 'overlay') || 'none' } : null;
  return { id, bodyMatches: header !== null && header === str(r, 'bodySha256'), ctime: num(r, 'ctime') };
}

/** Parse a preflight run into its report (pure, so the dry-run and the tests share it). */
export function preflightReport(plan: UpPlan, result: RemoteResult): PreflightReport {
  const checks = recordsOf(result, 'check').map((r) => ({ name: str(r, 'name') ?? '?', ok: bool(r, 'ok'), detail: str(r, 'detail') ?? '' }));
  const keys = new Map(recordsOf(result, 'env-key').map((r) => [str(r, 'key') ?? '', str(r, 'sha256') ?? ''] as const));
  const env = identity(result);
  const base = {
    checks,
    diff: diffEnv(keys, plan.env.values),
    currentIdentity: env.id,
    currentBodyMatches: env.bodyMatches,
    envCtime: env.ctime,
    container: container(result),
    mountCtimes: recordsOf(result, 'mount-ctime').map((r) => ({ path: str(r, 'path') ?? '', ctime: num(r, 'ctime') ?? 0 })),
    openConnections: num(lastRecord(result, 'connections'), 'count') ?? 0,
    otherVllmContainers: recordsOf(result, 'other-vllm').map((r) => str(r, 'name') ?? ''),
  };
  const skip = decideSkip(plan, base);
  const ok = checks.length > 0 && checks.every((c) => c.ok) && result.exitCode === 0;
  return { ok, ...base, sameIdentityRunning: skip.same, restartReason: skip.reason };
}

/** Run the read-only preflight; failed checks come back as `ok: false` (exit 11), never as a change. */
export async function runPreflight(session: NodeSession, plan: UpPlan, opts?: StepOptions): Promise<PreflightReport> {
  const result = await runStep(session, 'preflight', preflightInputs(plan), opts, [SCRIPT_EXIT.precondition, SCRIPT_EXIT.refused]);
  return preflightReport(plan, result);
}

/**
 * `up --dry-run --preflight`: the same read-only step, and a Docker daemon that does not answer is one failed check of
 * the report (`docker-daemon`) with every other check shown beside it, not an error that hides them; `dockerDown`
 * says so, for the exit code. A real up's step keeps the docker-down failure (runPreflight).
 */
export async function previewPreflight(session: NodeSession, plan: UpPlan): Promise<PreflightReport & { dockerDown: boolean }> {
  const result = await runStep(session, 'preflight', preflightInputs(plan), undefined, [SCRIPT_EXIT.precondition, SCRIPT_EXIT.refused, SCRIPT_EXIT.dockerDown]);
  return { ...preflightReport(plan, result), dockerDown: result.exitCode === SCRIPT_EXIT.dockerDown };
}
