/**
 * EXTRA_DOCKER_ARGS, overlay docker-args.txt and recipe dockerArgs: only `-e NAME=VALUE` and
 * `-v SRC:DST[:ro|rw]` pairs, because start.sh pastes the value unquoted into a generated bash script.
 */
import path from 'node:path';
import { wordProblem } from './safe.js';

export type DockerPair =
  | { kind: 'env'; name: string; value: string }
  | { kind: 'mount'; src: string; dst: string; mode: 'ro' | 'rw' | null };

/** On failure, `word` is the index (in the white-space split) of the pair's first word, so a caller can name a line. */
export type ParsedArgs = { ok: true; pairs: DockerPair[] } | { ok: false; error: string; word: number };

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/**
 * Secrets never travel in EXTRA_DOCKER_ARGS: the plan is stored in workflow history forever. VLLM_API_KEY is
 * vLLM's own key variable (read when --api-key is absent): set in the container it would also make every probe of
 * pulse, which sends the node .env API_KEY, answer 401.
 */
const SECRET_ENV = new Set(['HF_TOKEN', 'API_KEY', 'VLLM_API_KEY']);

/** Normalised mount target for conflict checks (`/a/b/` and `/a/b` are the same target). */
export function mountKey(dst: string): string {
  const n = path.posix.normalize(dst);
  return n.length > 1 && n.endsWith('/') ? n.slice(0, -1) : n;
}

function parseEnv(arg: string): DockerPair | string {
  const eq = arg.indexOf('=');
  if (eq <= 0) return `-e needs NAME=VALUE, got "${arg}"`;
  const name = arg.slice(0, eq);
  const value = arg.slice(eq + 1);
  if (!ENV_NAME.test(name)) return `-e ${arg}: NAME must be letters, digits and _`;
  if (name === 'VLLM_API_KEY') return '-e VLLM_API_KEY= is not allowed: put the key in the node .env as API_KEY (start.sh gives it to vLLM as --api-key)';
  if (SECRET_ENV.has(name)) return `-e ${name}= is not allowed: secrets stay in the node .env`;
  const p = wordProblem(value);
  if (p) return `-e ${name}: the value ${p}`;
  return { kind: 'env', name, value };
}

function parseMount(arg: string): DockerPair | string {
  const parts = arg.split(':');
  if (parts.length < 2 || parts.length > 3) return `-v needs SRC:DST[:ro|rw], got "${arg}"`;
  const [src = '', dst = '', mode] = parts;
  if (!path.posix.isAbsolute(src)) return `-v ${arg}: SRC must be an absolute path on the node`;
  if (!path.posix.isAbsolute(dst)) return `-v ${arg}: DST must be an absolute path in the container`;
  if (mode !== undefined && mode !== 'ro' && mode !== 'rw') return `-v ${arg}: the mode must be ro or rw, got "${mode}"`;
  const p = wordProblem(src) ?? wordProblem(dst);
  if (p) return `-v ${arg}: the path ${p}`;
  return { kind: 'mount', src, dst, mode: mode === 'ro' || mode === 'rw' ? mode : null };
}

/** Parse white-space separated pairs; the first bad word fails with a one-line reason. */
export function parseDockerArgs(text: string): ParsedArgs {
  const words = text.split(/\s+/).filter((w) => w !== '');
  const pairs: DockerPair[] = [];
  for (let i = 0; i < words.length; i += 2) {
    const flag = words[i] ?? '';
    const arg = words[i + 1];
    if (flag !== '-e' && flag !== '-v') {
      return { ok: false, error: `only -e NAME=VALUE and -v SRC:DST[:ro|rw] pairs are allowed, got "${flag}"`, word: i };
    }
    if (arg === undefined) return { ok: false, error: `${flag} at the end has no argument`, word: i };
    const p = wordProblem(arg);
    if (p) return { ok: false, error: `"${flag} ${arg}" ${p}`, word: i + 1 };
    const pair = flag === '-e' ? parseEnv(arg) : parseMount(arg);
    if (typeof pair === 'string') return { ok: false, error: pair, word: i + 1 };
    pairs.push(pair);
  }
  return { ok: true, pairs };
}

/** The pair written back as docker words, e.g. `-v /a:/b:ro`. */
export function pairText(p: DockerPair): string {
  if (p.kind === 'env') return `-e ${p.name}=${p.value}`;
  return `-v ${p.src}:${p.dst}${p.mode ? `:${p.mode}` : ''}`;
}

/** The first mount target that occurs twice in `pairs`, or null. */
export function duplicateMountTarget(pairs: readonly DockerPair[]): string | null {
  const seen = new Set<string>();
  for (const p of pairs) {
    if (p.kind !== 'mount') continue;
    const k = mountKey(p.dst);
    if (seen.has(k)) return p.dst;
    seen.add(k);
  }
  return null;
}
