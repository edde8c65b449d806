/**
 * `diff`: which keys of a rendered profile differ from the node's running .env, old → new. Pure. The running text
 * comes from status.sh, which replaced every line that names a secret by a marker before it left the node, so no
 * secret value is ever here; a secret key's value is masked all the same, wherever one shows up.
 */
import { mountKey, pairText, parseDockerArgs, type DockerPair } from '../config/docker-args.js';
import { isSecretKey, SECRET_LINE_MARK, SECRET_OTHER_MARK } from '../secrets.js';

export { SECRET_LINE_MARK } from '../secrets.js';
export const MASK = '<secret>';

export interface KeyDifference {
  key: string;
  /** The running value; null when the running .env does not set the key. */
  old: string | null;
  /** The rendered value; null when the profile does not set it. */
  new: string | null;
}

export interface EnvDiff {
  differences: KeyDifference[];
  /** Lines of the running .env that name a secret (write-env carries HF_TOKEN/API_KEY over to the new file). */
  secretLines: number;
}

/** White space runs as one space, trimmed: the same normal form preflight hashes (prelude.sh pulse_env_norm). */
export function normalised(v: string): string {
  return v.split(/\s+/).filter((w) => w !== '').join(' ');
}

/**
 * The KEY=value pairs of a .env text, read as the node's parser reads it (prelude.sh): `export `, blanks, comments,
 * unquoted (up to a ` #` comment), double- or single-quoted values that may span lines. Nothing is expanded.
 */
export function envValues(text: string): { values: Map<string, string>; secretLines: number } {
  const values = new Map<string, string>();
  let secretLines = 0;
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] ?? '').replace(/^[ \t]+/, '');
    if (line === SECRET_LINE_MARK || line === SECRET_OTHER_MARK) {
      secretLines += 1;
      continue;
    }
    const m = /^(?:export[ \t]+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (!m) continue;
    const key = m[1] as string;
    let rest = m[2] as string;
    const q = rest[0];
    if (q === '"' || q === "'") {
      rest = rest.slice(1);
      let end = rest.indexOf(q);
      while (end < 0 && i + 1 < lines.length) {
        rest += `\n${lines[++i] ?? ''}`;
        end = rest.indexOf(q);
      }
      values.set(key, end < 0 ? rest : rest.slice(0, end));
    } else {
      values.set(key, rest.replace(/[ \t]+#.*$/, '').replace(/[ \t]+$/, ''));
    }
  }
  return { values, secretLines };
}

const shown = (key: string, v: string | undefined): string | null => (v === undefined ? null : isSecretKey(key) ? MASK : normalised(v));

/** The keys whose value is a list of docker pairs: diffed pair by pair (issue 30 item 12: one long string said little). */
const PAIR_KEYS = new Set(['EXTRA_DOCKER_ARGS']);

/** A docker pair's identity: `-e NAME` or `-v <target>` (the same target with another source or mode is a change). */
function pairKey(p: DockerPair): string {
  return p.kind === 'env' ? `-e ${p.name}` : `-v ${mountKey(p.dst)}`;
}

/**
 * EXTRA_DOCKER_ARGS old → new as one difference per pair (`EXTRA_DOCKER_ARGS -e VLLM_LOGGING_LEVEL: INFO → DEBUG`,
 * `EXTRA_DOCKER_ARGS -v /models: (unset) → /srv/m:/models:ro`), or null when a side does not parse as pairs (it is
 * then diffed as one string, as before).
 */
function pairDifferences(key: string, old: string | null, now: string | null): KeyDifference[] | null {
  const parse = (v: string | null): Map<string, string> | null => {
    if (v === null) return new Map();
    const r = parseDockerArgs(v);
    return r.ok ? new Map(r.pairs.map((p) => [pairKey(p), pairText(p)])) : null;
  };
  const a = parse(old);
  const b = parse(now);
  if (a === null || b === null) return null;
  const out: KeyDifference[] = [];
  for (const k of [...b.keys(), ...[...a.keys()].filter((x) => !b.has(x))]) {
    const before = a.get(k) ?? null;
    const after = b.get(k) ?? null;
    if (before !== after) out.push({ key: `${key} ${k}`, old: before, new: after });
  }
  return out.length > 0 ? out : null; // the same pairs in another order: still a difference, said as the whole strings
}

/** Every key whose normalised value differs (or that only one side sets), in the rendered order, then the rest. */
export function diffEnv(runningText: string | null, rendered: Readonly<Record<string, string>>): EnvDiff {
  const { values, secretLines } = runningText === null ? { values: new Map<string, string>(), secretLines: 0 } : envValues(runningText);
  const keys = [...Object.keys(rendered), ...[...values.keys()].filter((k) => !Object.hasOwn(rendered, k))];
  const differences: KeyDifference[] = [];
  for (const key of keys) {
    const old = shown(key, values.get(key));
    const now = shown(key, Object.hasOwn(rendered, key) ? rendered[key] : undefined);
    if (old === now) continue;
    const pairs = PAIR_KEYS.has(key) ? pairDifferences(key, old, now) : null;
    differences.push(...(pairs ?? [{ key, old, new: now }]));
  }
  return { differences, secretLines };
}
