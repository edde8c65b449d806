/**
 * How long readiness takes on a node (issue 18 item 3): the node state keeps a short list of the readiness
 * durations of earlier successful starts (nodes/<node>.json `readinessHistory`), and an estimate is their median:
 * of the same .env identity when the node has some, else of the same profile, else none ("first start of this
 * profile here"). Pure: the state step (activities/publish.ts) records and estimates with these.
 */
import type { EnvIdentity, NodeState, ReadinessEstimate, ReadinessSample } from '../model/index.js';

/** Durations kept per profile on a node (the newest), and in all (a node that ran many profiles stays small). */
export const KEEP_PER_PROFILE = 5;
export const KEEP_IN_ALL = 20;
/** A readiness wait longer than this is no sample (a wrong number from a broken input, not a start). */
const MAX_S = 7 * 24 * 3600;
/** Past this share of the estimate the CLI notes, once, that this start takes longer than usual. */
export const SLOW_FACTOR = 1.5;

/** A readiness duration from a state input (untrusted JSON): whole seconds, or null. */
export function readinessSecondsOf(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= MAX_S ? Math.round(v) : null;
}

/** The samples of a state file as written (untrusted: anything malformed is dropped). */
export function samplesOf(state: Pick<NodeState, 'readinessHistory'> | null | undefined): ReadinessSample[] {
  const list = state?.readinessHistory;
  if (!Array.isArray(list)) return [];
  return list.filter(
    (x): x is ReadinessSample =>
      typeof x === 'object' && x !== null && typeof x.profile === 'string' && typeof x.sha256 === 'string' && readinessSecondsOf(x.s) !== null && typeof x.at === 'string',
  );
}

/** The list after a successful start of `identity` that waited `s` seconds for readiness (at `at`): bounded. */
export function recordReadiness(old: ReadinessSample[], identity: EnvIdentity, s: number, at: string): ReadinessSample[] {
  const all = [...old, { profile: identity.profile, sha256: identity.sha256, s: Math.round(s), at }];
  const perProfile = new Map<string, number>();
  const kept: ReadinessSample[] = [];
  for (let i = all.length - 1; i >= 0 && kept.length < KEEP_IN_ALL; i--) {
    const x = all[i] as ReadinessSample;
    const k = perProfile.get(x.profile) ?? 0;
    if (k >= KEEP_PER_PROFILE) continue;
    perProfile.set(x.profile, k + 1);
    kept.unshift(x);
  }
  return kept;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] as number) : Math.round(((s[mid - 1] as number) + (s[mid] as number)) / 2);
}

/** The estimate for a start of `identity`: the median of the same identity's samples, else the profile's, else none. */
export function readinessEstimate(samples: ReadinessSample[], identity: Pick<EnvIdentity, 'profile' | 'sha256'> | null): ReadinessEstimate {
  if (!identity) return { estimateS: null, samples: 0, basis: 'none' };
  const same = samples.filter((x) => x.profile === identity.profile && x.sha256 === identity.sha256);
  if (same.length > 0) return { estimateS: median(same.map((x) => x.s)), samples: same.length, basis: 'identity' };
  const profile = samples.filter((x) => x.profile === identity.profile);
  if (profile.length > 0) return { estimateS: median(profile.map((x) => x.s)), samples: profile.length, basis: 'profile' };
  return { estimateS: null, samples: 0, basis: 'none' };
}

/** An estimate, rounded as people say it: ~45s, ~15m, ~1h05m. */
export function about(s: number): string {
  const t = Math.max(0, Math.round(s));
  if (t < 60) return `~${t}s`;
  const m = Math.round(t / 60);
  return m < 60 ? `~${m}m` : `~${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

/** The words for an estimate: `~15m (5 earlier starts of this .env)`, or `first start of this profile here`. */
export function estimateWords(e: ReadinessEstimate): string {
  if (e.estimateS === null) return 'first start of this profile here';
  const what = e.basis === 'identity' ? 'this .env' : 'this profile';
  return `${about(e.estimateS)} (${e.samples} earlier start${e.samples === 1 ? '' : 's'} of ${what})`;
}

/** Whether a wait of `elapsedS` is past SLOW_FACTOR × the estimate. */
export function slowerThanUsual(e: ReadinessEstimate | null | undefined, elapsedS: number): boolean {
  return !!e && e.estimateS !== null && e.estimateS > 0 && elapsedS > e.estimateS * SLOW_FACTOR;
}

/** The estimate of an untrusted `{ readinessEstimate }` (the wait's third argument, a state step's answer), as fields. */
export function estimateOf(hint: unknown): { estimate?: ReadinessEstimate } {
  const e = (hint as { readinessEstimate?: unknown } | null | undefined)?.readinessEstimate as Partial<ReadinessEstimate> | null | undefined;
  if (!e || typeof e !== 'object' || typeof e.samples !== 'number' || !Number.isInteger(e.samples) || e.samples < 0) return {};
  const s = e.estimateS === null ? null : readinessSecondsOf(e.estimateS);
  if (s === null && e.estimateS !== null) return {};
  const basis = e.basis === 'identity' || e.basis === 'profile' ? e.basis : 'none';
  return { estimate: { estimateS: s, samples: e.samples, basis } };
}
