/**
 * Where two JSON values differ, as dotted paths (`recipe.start`, `fleet[2].gatewayUrl`, `env.values.PORT`) with both
 * values shown short: the worker's plan check names what differs in one line. Pure.
 */

export interface Difference {
  path: string;
  plan: unknown;
  worker: unknown;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Every leaf where `plan` and `worker` differ (a missing key counts as `undefined`), at most `max`. */
export function differences(plan: unknown, worker: unknown, max = 20, at = ''): Difference[] {
  const out: Difference[] = [];
  walk(plan, worker, at, out, max);
  return out;
}

function walk(a: unknown, b: unknown, at: string, out: Difference[], max: number): void {
  if (out.length >= max) return;
  if (isObject(a) && isObject(b)) {
    const keys = [...new Set([...Object.keys(b), ...Object.keys(a)])];
    for (const k of keys) walk(a[k], b[k], at === '' ? k : `${at}.${k}`, out, max);
    return;
  }
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
    a.forEach((x, i) => walk(x, b[i], `${at}[${i}]`, out, max));
    return;
  }
  if (JSON.stringify(a) !== JSON.stringify(b)) out.push({ path: at === '' ? '(the whole input)' : at, plan: a, worker: b });
}

/** A value in at most `width` characters (JSON, cut with an ellipsis); `undefined` reads "absent". */
export function shortValue(v: unknown, width = 60): string {
  if (v === undefined) return 'absent';
  const s = JSON.stringify(v);
  return s.length <= width ? s : `${s.slice(0, width - 1)}…`;
}

/** "recipe.start (plan "x", worker "y"); env.path (…)" for the first `shown` differences, then "and N more". */
export function describeDifferences(diffs: readonly Difference[], shown = 3): string {
  const head = diffs.slice(0, shown).map((d) => `${d.path} (plan ${shortValue(d.plan)}, worker ${shortValue(d.worker)})`);
  const more = diffs.length > shown ? `, and ${diffs.length - shown} more` : '';
  return `${head.join('; ')}${more}`;
}
