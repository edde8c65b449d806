/**
 * The one time format (UTC ISO, to the second) and the one duration format of everything pulse prints and stamps.
 * The workflow bundle takes this code too (the auto-rollback's render time): it stays import-free and pure (it
 * formats the time it is given, never reads a clock).
 */

/** `2026-12-03T07:48:27Z` from an ISO string, a Date or epoch ms; `?` for none or an invalid one. */
export function utc(t: string | number | Date | null | undefined): string {
  if (t === null || t === undefined) return '?';
  const ms = t instanceof Date ? t.getTime() : typeof t === 'number' ? t : Date.parse(t);
  return Number.isFinite(ms) ? new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z') : '?';
}

/**
 * `8s`, `3m12s`, `1h05m`, `2d3h`: seconds, rounded, never negative. `tenths`: below 10 s one decimal (`0.4s`, `3.2s`),
 * for a step line, where a sub-second step would otherwise read `0s`.
 */
export function duration(seconds: number | null | undefined, opts: { tenths?: boolean } = {}): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return '?';
  if (opts.tenths && seconds < 9.95) return `${Math.max(0, seconds).toFixed(1)}s`;
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  if (s < 86400) return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
  return `${Math.floor(s / 86400)}d${Math.floor((s % 86400) / 3600)}h`;
}
