/**
 * A small systemd unit-file reader for the deploy checks: sections, repeated keys, and backslash continuations,
 * which is all our units use. systemd-analyze verify (when present) checks the rest.
 */
export type UnitFile = Map<string, Map<string, string[]>>;

export function parseUnit(text: string): UnitFile {
  const unit: UnitFile = new Map();
  let section: Map<string, string[]> | undefined;
  const lines = text.replace(/\\\n/g, ' ').split('\n');
  for (const [i, raw] of lines.entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const head = /^\[(.+)\]$/.exec(line);
    if (head) {
      section = new Map();
      unit.set(head[1]!, section);
      continue;
    }
    const eq = line.indexOf('=');
    if (!section || eq <= 0) throw new Error(`line ${i + 1}: not a key=value inside a section: ${line}`);
    const key = line.slice(0, eq).trim();
    const values = section.get(key) ?? [];
    values.push(line.slice(eq + 1).trim().replace(/\s+/g, ' '));
    section.set(key, values);
  }
  return unit;
}

/** The last value of a key (systemd's rule for single-valued settings), or undefined. */
export function last(unit: UnitFile, section: string, key: string): string | undefined {
  return unit.get(section)?.get(key)?.at(-1);
}

/** systemd time span ("60", "60s", "1min 30s", "500ms") in seconds. */
export function timeSpanSeconds(span: string): number {
  const units: Record<string, number> = { '': 1, s: 1, sec: 1, second: 1, seconds: 1, ms: 0.001, m: 60, min: 60, minute: 60, minutes: 60, h: 3600, hr: 3600, hour: 3600, hours: 3600 };
  let total = 0;
  const re = /(\d+(?:\.\d+)?)\s*([a-z]*)/g;
  let matched = '';
  for (const m of span.matchAll(re)) {
    const factor = units[m[2]!];
    if (factor === undefined) throw new Error(`unknown time unit "${m[2]}" in "${span}"`);
    total += Number(m[1]) * factor;
    matched += m[0];
  }
  if (matched.replace(/\s/g, '') !== span.replace(/\s/g, '')) throw new Error(`not a time span: "${span}"`);
  return total;
}

/** Docker/compose duration ("45s", "1m30s", "500ms") in seconds. */
export function composeDurationSeconds(d: string): number {
  const units: Record<string, number> = { h: 3600, m: 60, s: 1, ms: 0.001, us: 1e-6 };
  let total = 0;
  let rest = d;
  for (const m of d.matchAll(/(\d+(?:\.\d+)?)(ms|us|h|m|s)/g)) {
    total += Number(m[1]) * units[m[2]!]!;
    rest = rest.replace(m[0], '');
  }
  if (rest !== '' || total === 0) throw new Error(`not a compose duration: "${d}"`);
  return total;
}
